package localkube

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortsAreDistinctBindableAndOutsideTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	if low == 0 {
		t.Fatal("no ephemeral range read from /proc/sys/net/ipv4/ip_local_port_range")
	}
	seen := map[int]bool{}
	for range 5 {
		ports, err := FreePorts(20)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
			if p < lowestPort || p >= low {
				t.Errorf("port %d outside [%d, %d)", p, lowestPort, low)
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Errorf("port %d: %v", p, err)
				continue
			}
			l.Close()
		}
	}
	if len(seen) != 100 {
		t.Fatalf("saw %d ports, want 100", len(seen))
	}
}
