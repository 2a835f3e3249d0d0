package inventory_test

import (
	"encoding/pem"
	"io"
)

func pemEncodeCert(w io.Writer, der []byte) error {
	return pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
}
