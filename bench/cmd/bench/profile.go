package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/client-go/rest"
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
	return b.saveBody(resp.Body, name)
}

// saveBody copies a profile's body into name in the output directory.
func (b *bench) saveBody(body io.Reader, name string) error {
	f, err := os.Create(filepath.Join(b.out, name))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return err
	}
	b.logf("profile saved: %s", filepath.Join(b.out, name))
	return f.Close()
}

// newEnv starts a measurement's env, with the API server's profiling on
// when -profile-parts asks for it.
func (b *bench) newEnv(ctx context.Context) (*env, error) {
	return newEnv(ctx, b.log, b.profileParts)
}

// partsProfiles starts CPU profiles of e's API server over the next
// -profile-for and of this driver (with its embedded nats-server) until
// the function returned is called, saved as apiserver-name and
// driver-name, when -profile-parts asks for them. The function must run
// before e closes; a run shorter than -profile-for then waits for the API
// server's profile. Failures are logged only.
func (b *bench) partsProfiles(e *env, name string) (stop func()) {
	if !b.profileParts {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.saveAPIServerProfile(e, "apiserver-"+name); err != nil {
			b.logf("API server profile %s: %v", name, err)
		}
	}()
	driver, err := os.Create(filepath.Join(b.out, "driver-"+name))
	if err == nil {
		err = pprof.StartCPUProfile(driver)
	}
	if err != nil {
		b.logf("driver profile %s: %v", name, err)
		return func() { <-done }
	}
	return func() {
		pprof.StopCPUProfile()
		if err := driver.Close(); err != nil {
			b.logf("driver profile %s: %v", name, err)
		}
		<-done
	}
}

func (b *bench) saveAPIServerProfile(e *env, name string) error {
	c, err := rest.HTTPClientFor(e.cp.Config)
	if err != nil {
		return err
	}
	c.Timeout = b.profileFor + 30*time.Second
	resp, err := c.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", e.cp.Config.Host, int(b.profileFor.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /debug/pprof/profile: %s", resp.Status)
	}
	return b.saveBody(resp.Body, name)
}
