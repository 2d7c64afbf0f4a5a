package report

import (
	"errors"
	"io"

	"github.com/assay-eval/assay/internal/calibrate"
)

// calibrateDocument is `assay calibrate`'s document: a judge held up
// against people's labels, in every format.
func calibrateDocument() *Document[*calibrate.Report] {
	return newDocument("calibrate",
		Format[*calibrate.Report]{Name: "text", Aliases: []string{""}, Render: CalibrationText},
		Format[*calibrate.Report]{Name: "markdown", Aliases: []string{"md"}, Render: CalibrationMarkdown},
		JSONFormat[*calibrate.Report](),
		Format[*calibrate.Report]{Name: "html", Render: CalibrationPage},
	)
}

// CalibrationText renders a calibration report as plain text.
func CalibrationText(w io.Writer, rep *calibrate.Report) error {
	return errors.New("calibration text: not implemented yet")
}

// CalibrationMarkdown renders a calibration report as markdown.
func CalibrationMarkdown(w io.Writer, rep *calibrate.Report) error {
	return errors.New("calibration markdown: not implemented yet")
}

// CalibrationPage renders a calibration report as a whole HTML document:
// the fragment CalibrationHTML writes inside the report's page chrome.
func CalibrationPage(w io.Writer, rep *calibrate.Report) error {
	return errors.New("calibration html: not implemented yet")
}

// CalibrationHTML writes a calibration report as an HTML fragment (no
// <html> or <body>): the body of the html format, which serve's
// calibration page embeds in its own chrome. Everything from labels is
// escaped.
func CalibrationHTML(w io.Writer, rep *calibrate.Report) error {
	return errors.New("calibration html: not implemented yet")
}
