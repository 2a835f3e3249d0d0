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
	return paginateBy(r, rows, "page", pageSize)
}

// paginateBy cuts rows into pages of size, the request's page given by the query parameter
// param (from 1); links keep the request's other parameters.
func paginateBy[T any](r *http.Request, rows []T, param string, size int) ([]T, pager) {
	from, to, p := window(r, len(rows), param, size)
	return rows[from:to], p
}

// window is where page ?param=N of total rows of size starts and ends, with its pager.
func window(r *http.Request, total int, param string, size int) (from, to int, p pager) {
	n, _ := strconv.Atoi(r.URL.Query().Get(param))
	last := max(1, (total+size-1)/size)
	n = min(max(n, 1), last)
	from, to = (n-1)*size, min(n*size, total)
	p = pager{From: from + 1, To: to, Total: total}
	if total == 0 {
		p.From = 0
	}
	link := func(page int) string {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			q[k] = v
		}
		q.Set(param, strconv.Itoa(page))
		return r.URL.Path + "?" + q.Encode()
	}
	if n > 1 {
		p.Prev = link(n - 1)
	}
	if n < last {
		p.Next = link(n + 1)
	}
	return from, to, p
}
