package serve

import (
	"html/template"
	"net/url"
)

// funcs are the template functions every page may use. None returns
// template.HTML built from data: everything is escaped by html/template.
var funcs = template.FuncMap{
	"query": func(kv ...string) template.URL {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] != "" {
				v.Set(kv[i], kv[i+1])
			}
		}
		return template.URL("?" + v.Encode())
	},
	"pathEscape": url.PathEscape,
}
