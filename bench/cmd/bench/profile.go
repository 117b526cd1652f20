package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// heapProfile saves the heap profile of p (serve's --pprof-addr) as name
// in the output directory.
// The same profile as text (with the runtime's memory statistics at its end)
// goes beside it.
func (b *bench) heapProfile(p *proc, name string) error {
	if err := b.saveProfile(p, "/debug/pprof/heap?gc=1", name, 30*time.Second); err != nil {
		return err
	}
	return b.saveProfile(p, "/debug/pprof/heap?debug=1", strings.TrimSuffix(name, ".pb.gz")+".txt", 30*time.Second)
}

// cpuProfile saves a CPU profile of p over the next d, as name; it is
// meant to run in its own goroutine from process start, and reports
// failures in the log only (a convergence shorter than d ends it early).
func (b *bench) cpuProfile(p *proc, d time.Duration, name string) {
	// Until serve listens, a request fails at once: retry briefly.
	for i := 0; i < 100; i++ {
		err := b.saveProfile(p, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())), name, d+30*time.Second)
		if err == nil || p.alive() != nil {
			return
		}
		select {
		case <-p.exited:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *bench) saveProfile(p *proc, path, name string, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get("http://" + p.pprof + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	f, err := os.Create(filepath.Join(b.out, name))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	b.logf("profile saved: %s", filepath.Join(b.out, name))
	return f.Close()
}
