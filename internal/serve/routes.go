package serve

import (
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// routes registers every page. Each feature file adds its own routes; all
// writes are POST (GET handlers never change the store).
func (s *Server) routes() error {
	if err := s.parsePages(); err != nil {
		return err
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return err
	}
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	s.mux.HandleFunc("GET /login", s.loginForm)
	s.mux.HandleFunc("POST /login", s.login)
	s.runRoutes()        // runs.go: runs list, a run's report, two runs compared
	s.caseRoutes()       // cases.go: the case explorer and a case's page
	s.labelRoutes()      // labels.go: labeling queues
	s.calibrateRoutes()  // calibrate.go: a judge calibrated against the labels
	s.difficultyRoutes() // difficulty.go: experts rate cases' difficulty
	return nil
}

// loginPage is the login form's data.
type loginPage struct {
	Next  string
	Error string
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "login", "log in", loginPage{Next: safeNext(r.URL.Query().Get("next"))})
}

// login sets the token cookie when the form's token is the server's.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, badRequest("reading the form: %v", err))
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	probe := &http.Request{Header: http.Header{"Authorization": {"Bearer " + r.PostForm.Get("token")}}}
	if s.o.Token == "" || !s.authorized(probe) {
		w.WriteHeader(http.StatusUnauthorized)
		s.renderStatus(w, r, "login", loginPage{Next: next, Error: "wrong token"})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a redirect target on this server: a path, never a URL
// (nor "//host", which browsers read as one, nor "/\host" or "/<tab>/host",
// which they turn into it: a backslash, a space or a control character
// anywhere sends the visitor to "/").
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") {
		return "/"
	}
	if strings.ContainsFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' || !unicode.IsPrint(r) }) {
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
