package localfleet

import (
	"fmt"
	"net"
)

// freePorts asks the kernel for n distinct free TCP ports on 127.0.0.1. The listeners are held
// until all ports are chosen, so the same call never returns one port twice; another process
// may still take a port before the plane binds it, which the plane reports as a start failure.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
