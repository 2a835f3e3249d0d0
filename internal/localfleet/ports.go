package localfleet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Ports for planes come from below the kernel's ephemeral range: a port there is never handed
// out for an outgoing connection, so a port found free stays free until the plane binds it
// unless another process picks the very same one (rare among 20000 candidates). Ports asked of
// the kernel with ":0" come from the ephemeral range, where a busy test run's client connections
// can take them in the moment between choosing and binding.
const (
	lowestPort            = 10000
	defaultEphemeralStart = 32768
	portAttempts          = 200
)

// freePorts returns n distinct free TCP ports on 127.0.0.1, chosen at random below the ephemeral
// range. The listeners are held until all ports are chosen, so one call never returns a port
// twice; another process may still take a port before the plane binds it, which the plane
// reports as a start failure.
func freePorts(n int) ([]int, error) {
	highest := ephemeralStart() - 1
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for attempt := 0; len(ports) < n; attempt++ {
		if attempt == portAttempts {
			return nil, fmt.Errorf("no free port on 127.0.0.1 between %d and %d after %d attempts", lowestPort, highest, portAttempts)
		}
		port := lowestPort + rand.IntN(highest-lowestPort+1)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: try another
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralStart returns the first port of the kernel's ephemeral range (Linux), or the common
// default where it cannot be read.
func ephemeralStart() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralStart
	}
	fields := strings.Fields(string(raw))
	if len(fields) == 0 {
		return defaultEphemeralStart
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start <= lowestPort+1000 {
		return defaultEphemeralStart
	}
	return start
}
