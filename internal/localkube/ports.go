package localkube

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// lowestPort is the smallest port FreePorts hands out: below it sit the
// well-known and registered ports other software expects to own.
const lowestPort = 10000

var (
	portsMu sync.Mutex
	// handedOut holds every port FreePorts returned in this process, so it
	// never returns one twice even after its listener has closed.
	handedOut = map[int]bool{}
)

// FreePorts returns n loopback ports that were free a moment ago and that
// this process has not handed out before. A caller binds them later (a
// child process's flags name them), so the gap between the check and the
// bind is a race: the ports are picked at random below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), where no listener on
// port 0 and no outgoing connection of any process is given a port by the
// kernel. Picking from inside that range, as asking the kernel for port 0
// does, lost a node's route port to another test's HTTP server.
func FreePorts(n int) ([]int, error) {
	lo, hi := lowestPort, ephemeralLow()
	if hi-lo < 1000 {
		return kernelPorts(n)
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n {
			return nil, fmt.Errorf("free port: no unused port between %d and %d after %d tries", lo, hi, tries)
		}
		p := lo + rand.IntN(hi-lo)
		if handedOut[p] || !free(p) {
			continue
		}
		handedOut[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}

// free reports whether port p can be listened on at 127.0.0.1 now.
func free(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range, or 0
// when it cannot be read (not Linux).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}

// kernelPorts asks the kernel for n ports (port 0), holding each listener
// until all are chosen so none repeats.
func kernelPorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
