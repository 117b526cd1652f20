package testenv

import (
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a loopback port to a target, and can
// cut the link (every connection closed, new ones refused) and restore it,
// like a network partition between two servers, or delay what clients send
// (held, then delivered late, as a congested network would).
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cut     bool
	conns   map[net.Conn]struct{}
	refused int
	// delayed, while open, holds what clients send; closed by Deliver.
	delayed chan struct{}
	trigger []byte // starts a delay where a client sends it
	held    int
}

// StartProxy listens on a free loopback port and forwards to target until
// the test ends.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Must(tb, err)
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	tb.Cleanup(func() {
		_ = ln.Close()
		p.Deliver()
		p.Cut()
	})
	return p
}

// Addr is the address to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every forwarded connection and refuses new ones until
// Restore. It returns how many connections it closed (each forwarded one
// counts its two ends once): a cut that closed none proves nothing about
// a client that was connected.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	n := len(p.conns) / 2
	clear(p.conns)
	return n
}

// Refused returns how many connections were refused while cut.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go p.forward(in)
	}
}

func (p *Proxy) forward(in net.Conn) {
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = in.Close()
		return
	}
	if !p.track(in, out) {
		_ = in.Close()
		_ = out.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst io.Writer, src io.Reader) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go func() {
		_, _ = io.Copy(out, p.delaying(in))
		done <- struct{}{}
	}()
	go pipe(in, out)
	<-done
	_ = in.Close()
	_ = out.Close()
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

// track records a forwarded pair, or refuses it while the link is cut.
func (p *Proxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		p.refused++
		return false
	}
	p.conns[in], p.conns[out] = struct{}{}, struct{}{}
	return true
}

// Delay holds what clients send from now on (what the target sends still
// flows) until Deliver; the connections stay open.
func (p *Proxy) Delay() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.delayed != nil {
		close(p.delayed) // a delay not delivered yet ends here
	}
	p.delayed, p.held, p.trigger = make(chan struct{}), 0, nil
}

// DelayFrom delays as Delay does, from the first bytes a client sends that
// hold trigger on (a protocol message, say), the bytes before it passing:
// the message and everything after it arrive late. The trigger is looked
// for in each read from the client: one split across two reads (a
// message larger than a read) is not seen, and Delaying says so.
func (p *Proxy) DelayFrom(trigger []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger, p.held = trigger, 0
}

// Delaying reports whether the proxy holds what clients send.
func (p *Proxy) Delaying() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delayed != nil
}

// Deliver sends on what Delay held, then lets traffic flow again, and
// returns how many bytes were held: none held proves nothing about a
// client that was to send.
func (p *Proxy) Deliver() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.delayed != nil {
		close(p.delayed)
		p.delayed = nil
	}
	p.trigger = nil
	return p.held
}

// delaying wraps a client's side so that its bytes wait while the proxy
// delays, counting what it holds.
func (p *Proxy) delaying(r io.Reader) io.Reader { return &delayedReader{p: p, r: r} }

type delayedReader struct {
	p       *Proxy
	r       io.Reader
	pending []byte // read from the client, to hand on after the delay
}

// Read hands on what the client sent, waiting out a delay first (and
// starting one where a trigger appears: the bytes before it go at once).
func (d *delayedReader) Read(b []byte) (int, error) {
	var n int
	var err error
	if len(d.pending) > 0 {
		n = copy(b, d.pending)
		d.pending = d.pending[n:]
	} else if n, err = d.r.Read(b); n == 0 {
		return n, err
	}
	d.p.mu.Lock()
	if t := d.p.trigger; t != nil && d.p.delayed == nil {
		if i := bytes.Index(b[:n], t); i >= 0 {
			d.p.delayed, d.p.trigger = make(chan struct{}), nil
			if i > 0 { // the bytes before the trigger pass now
				d.pending = append(slices.Clone(b[i:n]), d.pending...)
				n = i
				d.p.mu.Unlock()
				return n, err
			}
		}
	}
	wait := d.p.delayed
	if wait != nil {
		d.p.held += n
	}
	d.p.mu.Unlock()
	if wait != nil {
		<-wait
	}
	return n, err
}
