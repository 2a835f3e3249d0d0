package localfleet

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
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

// handedOut are the ports freePorts returned in this process: a plane keeps its ports across
// restarts, and the planes of a fleet start at once, so a port given to one plane is never
// given to another, even while the first has not bound it yet (with per-call uniqueness only,
// two of a ten-spoke fleet's thirty-odd ports collided in about one start in forty).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePorts returns n distinct free TCP ports on 127.0.0.1, chosen at random below the ephemeral
// range, none returned before in this process. Another process may still take a port before
// the plane binds it, which the plane reports as a start failure.
func freePorts(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
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
		if handedOut.ports[port] {
			continue // another plane's
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: try another
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	for _, p := range ports {
		handedOut.ports[p] = true
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
