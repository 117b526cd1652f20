package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal (an *os.File on a tty).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Style colours text when it is on, and leaves it alone otherwise.
type Style struct {
	on bool
}

// StyleFor returns a Style that colours only when w is a terminal, the
// NO_COLOR environment variable is empty and TERM is not "dumb".
func StyleFor(w io.Writer, getenv func(string) string) Style {
	return Style{on: IsTerminal(w) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}

func (s Style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Green is for additions and successful writes.
func (s Style) Green(text string) string { return s.wrap("32", text) }

// Red is for removals and errors.
func (s Style) Red(text string) string { return s.wrap("31", text) }

// Yellow is for warnings and changes.
func (s Style) Yellow(text string) string { return s.wrap("33", text) }

// Cyan is for diff hunk headers.
func (s Style) Cyan(text string) string { return s.wrap("36", text) }

// Bold is for headings.
func (s Style) Bold(text string) string { return s.wrap("1", text) }
