package localfleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// etcdKV reads and writes a plane's etcd directly, through the JSON gateway etcd serves on its
// client URL (/v3/kv/...), so that a reset needs no gRPC client. Only Reset uses it: everything
// else goes through the API server.
type etcdKV struct {
	url    string // http://127.0.0.1:<client port>
	client *http.Client
}

// maxTxnOps stays under etcd's default --max-txn-ops (128).
const maxTxnOps = 100

// keyValue is one stored key with its value.
type keyValue struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
}

// prefixEnd is the end of the key range that holds every key starting with prefix.
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	end[len(end)-1]++
	return end
}

// list returns every key under prefix with its value, and the store's revision at the read.
func (e etcdKV) list(ctx context.Context, prefix string) (map[string][]byte, int64, error) {
	var out struct {
		revisionHeader
		Kvs []keyValue `json:"kvs"`
	}
	req := map[string][]byte{"key": []byte(prefix), "range_end": prefixEnd(prefix)}
	if err := e.call(ctx, "/v3/kv/range", req, &out); err != nil {
		return nil, 0, err
	}
	rev, err := out.revision()
	if err != nil {
		return nil, 0, err
	}
	kvs := make(map[string][]byte, len(out.Kvs))
	for _, kv := range out.Kvs {
		kvs[string(kv.Key)] = kv.Value
	}
	return kvs, rev, nil
}

// apply deletes the keys in del and writes the values in put, in transactions of at most
// maxTxnOps operations each, and returns the store's revision after the last one (rev, the
// revision read before, when there is nothing to do).
func (e etcdKV) apply(ctx context.Context, rev int64, del []string, put map[string][]byte) (int64, error) {
	type op map[string]any
	var ops []op
	for _, k := range del {
		ops = append(ops, op{"request_delete_range": map[string][]byte{"key": []byte(k)}})
	}
	for k, v := range put {
		ops = append(ops, op{"request_put": map[string][]byte{"key": []byte(k), "value": v}})
	}
	for len(ops) > 0 {
		n := min(len(ops), maxTxnOps)
		var out revisionHeader
		if err := e.call(ctx, "/v3/kv/txn", map[string]any{"success": ops[:n]}, &out); err != nil {
			return 0, err
		}
		var err error
		if rev, err = out.revision(); err != nil {
			return 0, err
		}
		ops = ops[n:]
	}
	return rev, nil
}

// revisionHeader is the header of every answer of etcd's gateway.
type revisionHeader struct {
	Header struct {
		Revision string `json:"revision"`
	} `json:"header"`
}

func (h revisionHeader) revision() (int64, error) {
	rev, err := strconv.ParseInt(h.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd: revision %q: %w", h.Header.Revision, err)
	}
	return rev, nil
}

func (e etcdKV) call(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in) // []byte fields marshal as base64, as the gateway expects
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: HTTP %d: %s", path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
