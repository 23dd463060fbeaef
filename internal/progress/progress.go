// Package progress draws a run's progress as a bar on a terminal that can
// show one, and draws nothing anywhere else (a file, a pipe, TERM=dumb):
// what a run prints there stays its results and messages.
package progress

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/p2pbench/p2pbench/internal/termsafe"
)

// Bar is a progress bar, or nothing where none can be drawn.
type Bar struct{ bar *progressbar.ProgressBar }

// New draws on w when it is a terminal and termName (TERM) is not "dumb".
func New(w io.Writer, termName string) *Bar {
	f, ok := termsafe.File(w) // the bar draws on the terminal itself
	if !ok || termName == "dumb" || !term.IsTerminal(int(f.Fd())) {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions(1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))}
}

// Update shows done of total steps, step the one under way.
func (p *Bar) Update(done, total int, step string) {
	if p.bar == nil {
		return
	}
	p.bar.ChangeMax(total)
	p.bar.Describe(step)
	_ = p.bar.Set(done)
}

// Finish clears the bar.
func (p *Bar) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
