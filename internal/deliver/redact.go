package deliver

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SecretError is err, the spoke's answer to a write of obj, as it may be shown anywhere
// (status, Events, logs, `flotilla plan`): unchanged for any object but a core Secret. For a
// Secret, the spoke's message is withheld, because it can quote the data (a server-side
// apply's type errors print the value they refuse), and reduced to the refusal's reason, its
// HTTP code and the Secret's key names. The result still answers apierrors' questions
// (IsInvalid, IsForbidden...) as err did. An authorization refusal is kept as the spoke words
// it: the authorizer names the user, verb and resource, never the data.
func SecretError(obj *unstructured.Unstructured, err error) error {
	if err == nil || obj == nil || obj.GroupVersionKind().Group != "" || obj.GetKind() != "Secret" || rbacRefusal(err) {
		return err
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		// Not the spoke's answer (the request never got one): the client's own text, which
		// never holds the body it sent.
		return err
	}
	s := status.Status()
	reason := s.Reason
	if reason == "" {
		reason = metav1.StatusReason(http.StatusText(int(s.Code)))
	}
	msg := fmt.Sprintf("the cluster refused the Secret (%s, %d); its message is withheld because it may quote the Secret's data; the Secret's keys: %s",
		reason, s.Code, secretKeys(obj))
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: s.Code, Reason: s.Reason, Message: msg}}
}

// rbacRefusal reports whether err is the authorizer's refusal, which quotes no data.
func rbacRefusal(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), `User "`) && strings.Contains(err.Error(), `" cannot `)
}

// secretKeys lists the keys of a Secret's data and stringData, sorted: what a redacted message
// may say of its content.
func secretKeys(obj *unstructured.Unstructured) string {
	seen := map[string]bool{}
	for _, field := range []string{"data", "stringData"} {
		m, _, _ := unstructured.NestedFieldNoCopy(obj.Object, field)
		if values, ok := m.(map[string]any); ok {
			for k := range values {
				seen[k] = true
			}
		}
	}
	if len(seen) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
