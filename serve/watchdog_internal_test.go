package serve

import "testing"

func TestAReconnectMovesOnlyWhereAnotherServerCanAnswer(t *testing.T) {
	for _, tt := range []struct {
		servers   []string
		connected string
		want      bool
	}{
		{[]string{"nats://10.0.0.1:4222", "nats://10.0.0.2:4222"}, "nats://10.0.0.1:4222", true},
		{[]string{"nats://tinyctl-nats.tinyctl-system.svc:4222"}, "nats://tinyctl-nats.tinyctl-system.svc:4222", true},
		{[]string{"nats://127.0.0.1:4222"}, "nats://127.0.0.1:4222", false},
		{[]string{"nats://localhost:4222"}, "nats://localhost:4222", false},
		{[]string{"nats://[::1]:4222"}, "nats://[::1]:4222", false},
	} {
		if got := canMove(tt.servers, tt.connected); got != tt.want {
			t.Errorf("canMove(%v, %s) = %v, want %v", tt.servers, tt.connected, got, tt.want)
		}
	}
}
