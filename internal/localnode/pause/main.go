// Command pause is the pod sandbox's process on a local node (package
// localnode): it holds the pod's namespaces, reaps the children that are
// reparented to it, and exits on SIGTERM or SIGINT. containerd runs it as
// the sandbox image; it is built here because no registry is reachable.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
