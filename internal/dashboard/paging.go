package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
)

// pageSize is how many rows a long list shows at once: a fleet of a thousand clusters, or a
// cluster running thousands of objects, is read page by page, rendered and sent as one page.
const pageSize = 200

// pager is where a list is cut, with the links to the pages around it.
type pager struct {
	From, To, Total int
	Prev, Next      string
}

// paginate returns the rows of the request's page (?page=N, from 1) and its pager.
func paginate[T any](r *http.Request, rows []T) ([]T, pager) {
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	last := max(1, (len(rows)+pageSize-1)/pageSize)
	n = min(max(n, 1), last)
	from, to := (n-1)*pageSize, min(n*pageSize, len(rows))
	p := pager{From: from + 1, To: to, Total: len(rows)}
	if len(rows) == 0 {
		p.From = 0
	}
	link := func(page int) string {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			q[k] = v
		}
		q.Set("page", strconv.Itoa(page))
		return r.URL.Path + "?" + q.Encode()
	}
	if n > 1 {
		p.Prev = link(n - 1)
	}
	if n < last {
		p.Next = link(n + 1)
	}
	return rows[from:to], p
}
