package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
)

// The dashboard scenario runs on the fleet bulk delivered (one Propagation of p.Objects
// ConfigMaps on every spoke): `flotilla dashboard` serves it with the hub's admin kubeconfig.
// dashboard_fleet and dashboard_owner are the time to the complete HTML of the fleet page and
// of the Propagation's page (its matrix of objects by cluster, 200 objects a page), each loaded
// dashboardLoads times; dashboard_update is from a spoke's watch seeing an object changed
// there to the owner page's server-sent event that shows it Drifted, over dashboardEdits
// changes of the first objects (their hub copies say flotilla.dev/drift=Report meanwhile, so
// Flotilla reports the drift instead of correcting it).
const (
	dashboardLoads = 20
	dashboardEdits = 20
	ownerPage      = "/owners/Propagation/" + ns + "/bench"
)

func (b *bench) dashboard(ctx context.Context, r *report) error {
	start := time.Now()
	d, err := startDashboard(ctx, b.binDir, b.hubKC)
	if err != nil {
		return err
	}
	defer d.proc.stop()
	for _, page := range []struct{ name, path string }{{"fleet", "/"}, {"owner", ownerPage}} {
		loads, ttfb, size := make([]time.Duration, 0, dashboardLoads), make([]time.Duration, 0, dashboardLoads), 0
		for range dashboardLoads {
			first, whole, n, err := d.load(ctx, page.path)
			if err != nil {
				return err
			}
			ttfb, loads, size = append(ttfb, first), append(loads, whole), n
		}
		cold := loads[0]
		if page.path == "/" {
			cold = d.cold
		}
		note := fmt.Sprintf("complete HTML, %d loads of %s (%d kB); first load %.0f ms; first byte p50 %.0f ms; target ≤ 300", dashboardLoads, page.path, size/1000,
			float64(cold.Microseconds())/1000, percentile(ttfb, 0.5))
		r.add("dashboard_"+page.name+"_p50", "ms", f(percentile(loads, 0.5)), nil, note)
		r.add("dashboard_"+page.name+"_p99", "ms", f(percentile(loads, 0.99)), nil, "")
	}
	lat, err := b.dashboardUpdates(ctx, d)
	if err != nil {
		return err
	}
	if len(lat) == 0 {
		return fmt.Errorf("no live update measured")
	}
	r.add("dashboard_update_p50", "ms", f(percentile(lat, 0.5)), nil,
		fmt.Sprintf("a spoke's watch seeing an object changed → the owner page's event showing it Drifted, %d changes; target ≤ 1000 (scenario: %.0f s)", len(lat), time.Since(start).Seconds()))
	r.add("dashboard_update_p99", "ms", f(percentile(lat, 0.99)), nil, "")
	return nil
}

// dashboardUpdates drifts (object, spoke) pairs one at a time and times each to its event.
func (b *bench) dashboardUpdates(ctx context.Context, d *dashboardProc) ([]time.Duration, error) {
	objects := min(b.p.Objects-1, (dashboardEdits+len(b.spokes)-1)/len(b.spokes))
	if objects < 1 {
		return nil, nil
	}
	hubCS, err := kubernetes.NewForConfig(b.fleet.Hub().RESTConfig())
	if err != nil {
		return nil, err
	}
	report := func(on bool) error {
		value := "null"
		if on {
			value = fmt.Sprintf("%q", flotillav1.DriftReport)
		}
		for i := 1; i <= objects; i++ {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, flotillav1.AnnotationDrift, value)
			if _, err := hubCS.CoreV1().ConfigMaps(ns).Patch(ctx, configMap(i, b.p, "").Name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
				return err
			}
		}
		return b.waitApplied(ctx)
	}
	if err := report(true); err != nil {
		return nil, err
	}
	events, stop, err := d.stream(ctx, ownerPage)
	if err != nil {
		return nil, err
	}
	defer stop()
	columns := make([]string, 0, len(b.spokes)) // the matrix's columns: the clusters by name
	for _, s := range b.pushSpokes() {
		columns = append(columns, s.Name())
	}
	sort.Strings(columns)
	var lat []time.Duration
	type edit struct {
		spoke int
		name  string
		want  string
	}
	var edits []edit
	for i := range min(dashboardEdits, objects*len(b.spokes)) {
		e := edit{spoke: i % len(b.spokes), name: configMap(1+i/len(b.spokes), b.p, "").Name}
		seen, want, err := editAndSee(ctx, b.spokes[e.spoke], e.name, fmt.Sprintf("dash-%d", i))
		if err != nil {
			return nil, err
		}
		e.want = want
		edits = append(edits, e)
		object, col := "configmap "+ns+"/"+e.name, slices.Index(columns, b.pushSpokes()[e.spoke].Name())
		deadline := time.After(time.Minute)
		for shown := false; !shown; {
			select {
			case ev, ok := <-events:
				if !ok {
					return nil, fmt.Errorf("the owner page's event stream ended")
				}
				if cellState(ev.data, object, col) == "Drifted" {
					lat = append(lat, max(0, ev.at.Sub(seen)))
					shown = true
				}
			case <-deadline:
				return nil, fmt.Errorf("change %d (%s on %s) not shown Drifted within a minute", i, e.name, b.pushSpokes()[e.spoke].Name())
			}
		}
	}
	// Put the fleet back as bulk left it: the copies as delivered, drift corrected again.
	for _, e := range edits {
		if _, _, err := editAndSee(ctx, b.spokes[e.spoke], e.name, e.want); err != nil {
			return nil, err
		}
	}
	return lat, report(false)
}

var stateAttr = regexp.MustCompile(`data-state="([A-Za-z]*)"`)

// cellState is the state an owner page's matrix shows for an object in a column.
func cellState(page []byte, object string, col int) string {
	at := bytes.Index(page, []byte("<code>"+object+"</code>"))
	if at < 0 {
		return ""
	}
	row := page[at:]
	if end := bytes.Index(row, []byte("</tr>")); end >= 0 {
		row = row[:end]
	}
	cells := bytes.Split(row, []byte("<td data-object="))[1:]
	if col < 0 || col >= len(cells) {
		return ""
	}
	if m := stateAttr.FindSubmatch(cells[col]); m != nil {
		return string(m[1])
	}
	return ""
}

// editAndSee sets a spoke ConfigMap's version and returns when the spoke's watch saw it, with
// the version it had.
func editAndSee(ctx context.Context, cs kubernetes.Interface, name, version string) (time.Time, string, error) {
	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return time.Time{}, "", err
	}
	was := cm.Data["version"]
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: cm.ResourceVersion})
	if err != nil {
		return time.Time{}, "", err
	}
	defer w.Stop()
	cm.Data["version"] = version
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "bench-editor"}); err != nil {
		return time.Time{}, "", err
	}
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, "", fmt.Errorf("watch of %s ended", name)
			}
			if c, isCM := ev.Object.(*corev1.ConfigMap); isCM && ev.Type == watch.Modified && c.Data["version"] == version {
				return time.Now(), was, nil
			}
		case <-timeout:
			return time.Time{}, "", fmt.Errorf("the spoke's watch did not see %s change within a minute", name)
		}
	}
}

// dashboardProc is `flotilla dashboard` with a browser's cookie of its key.
type dashboardProc struct {
	proc *process
	base string
	http *http.Client
	cold time.Duration // the first load of the fleet page, with the key in its URL
}

var dashboardURL = regexp.MustCompile(`dashboard: (http://\S+)`)

// startDashboard runs `flotilla dashboard` and opens its URL, as the browser would.
func startDashboard(ctx context.Context, binDir, kubeconfig string) (*dashboardProc, error) {
	p, err := startProcess(filepath.Join(binDir, "flotilla"), "dashboard", "--hub-kubeconfig", kubeconfig, "--open=false")
	if err != nil {
		return nil, err
	}
	d := &dashboardProc{proc: p}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if m := dashboardURL.FindStringSubmatch(p.log.String()); m != nil {
			jar, _ := cookiejar.New(nil)
			d.http = &http.Client{Jar: jar, Timeout: time.Minute}
			u, err := url.Parse(m[1])
			if err != nil {
				p.stop()
				return nil, err
			}
			d.base = u.Scheme + "://" + u.Host
			if _, d.cold, _, err = d.load(ctx, u.RequestURI()); err != nil { // sets the key's cookie
				p.stop()
				return nil, err
			}
			return d, nil
		}
		select {
		case err := <-p.exited:
			return nil, fmt.Errorf("flotilla dashboard exited: %v\n%s", err, tail(p.log.String(), 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("flotilla dashboard printed no URL within 2 minutes:\n%s", tail(p.log.String(), 20))
		}
	}
}

// load gets a page: the time to its first byte, to its last, and its size.
func (d *dashboardProc) load(ctx context.Context, path string) (first, whole time.Duration, size int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	first = time.Since(start)
	data, err := io.ReadAll(resp.Body)
	whole = time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return first, whole, len(data), err
}

// sseEvent is one page event of a stream, with when it arrived.
type sseEvent struct {
	at   time.Time
	data []byte
}

// stream opens the event stream of a page; its events arrive on the channel until stop.
func (d *dashboardProc) stream(ctx context.Context, page string) (<-chan sseEvent, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+"/events?page="+url.QueryEscape(page), nil)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	streaming := &http.Client{Jar: d.http.Jar} // no timeout: the stream lasts
	resp, err := streaming.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		cancel()
		return nil, nil, fmt.Errorf("events of %s: %s", page, resp.Status)
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		defer func() { _ = resp.Body.Close() }()
		lines := bufio.NewReaderSize(resp.Body, 1<<20)
		var data []byte
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				return
			}
			line = bytes.TrimRight(line, "\n")
			switch {
			case len(line) == 0 && data != nil:
				select {
				case out <- sseEvent{at: time.Now(), data: data}:
				case <-ctx.Done():
					return
				}
				data = nil
			case bytes.HasPrefix(line, []byte("data: ")):
				data = append(append(data, line[len("data: "):]...), '\n')
			}
		}
	}()
	return out, cancel, nil
}
