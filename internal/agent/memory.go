package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	flotillav1 "github.com/flotilla-dev/flotilla/api/v1alpha1"
	"github.com/flotilla-dev/flotilla/internal/render"
)

// The agent keeps one ConfigMap on its spoke, MemoryName in its namespace (the Pod's,
// POD_NAMESPACE, else DefaultNamespace): what it delivered there, by owner (its Delivery
// record, every kind it delivered, its deletion policy), written before a job delivers a kind
// the ConfigMap does not list yet. A restarted agent reads it first, so an owner the hub stopped
// listing while the agent was down is still removed after the grace, and a kind an owner
// dropped is still pruned. It is also the object the agent's Events are about when it runs
// outside a Pod (signal.go).
const (
	MemoryName       = "flotilla-agent"
	DefaultNamespace = "flotilla-system"
	// memoryKey holds the owners, as JSON: owner (render.Owner's String form) → remembered.
	memoryKey = "owners"
)

// memory reads and writes the agent's ConfigMap on the spoke.
type memory struct {
	spoke     kubernetes.Interface
	namespace string
	cluster   string
	cm        *corev1.ConfigMap // as last read or written
	saved     map[render.Owner]remembered
}

// agentNamespace is the namespace of the agent's objects on the spoke.
func agentNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return DefaultNamespace
}

// openMemory reads the agent's ConfigMap, creating it (and its namespace) when it is not
// there. What it cannot read stops the agent: without it a restarted agent would leave behind
// what the hub stopped listing meanwhile.
func openMemory(ctx context.Context, spoke kubernetes.Interface, namespace, cluster string) (*memory, map[render.Owner]remembered, error) {
	m := &memory{spoke: spoke, namespace: namespace, cluster: cluster}
	cms := spoke.CoreV1().ConfigMaps(namespace)
	cm, err := cms.Get(ctx, MemoryName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		if _, err := spoke.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("create namespace %s on the spoke for the agent's ConfigMap: %w", namespace, err)
		}
		cm, err = cms.Create(ctx, m.configMap(nil), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cm, err = cms.Get(ctx, MemoryName, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the agent's ConfigMap %s/%s on the spoke (it needs get, create and update of ConfigMaps there): %w", namespace, MemoryName, err)
	}
	if c := cm.Labels[flotillav1.LabelCluster]; c != "" && c != cluster {
		return nil, nil, fmt.Errorf("the ConfigMap %s/%s on the spoke is the memory of cluster %q's agent, not %q's: is another agent running on this spoke?", namespace, MemoryName, c, cluster)
	}
	owners, err := parseMemory(cm.Data[memoryKey])
	if err != nil {
		return nil, nil, fmt.Errorf("the agent's ConfigMap %s/%s on the spoke: %w (fix or delete its %q key; deleting it forgets what to remove)", namespace, MemoryName, err, memoryKey)
	}
	m.cm, m.saved = cm, owners
	return m, owners, nil
}

func (m *memory) configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: MemoryName, Namespace: m.namespace,
			Labels: map[string]string{flotillav1.LabelCluster: m.cluster, "app.kubernetes.io/managed-by": "flotilla"},
			Annotations: map[string]string{"flotilla.dev/purpose": "What Flotilla's pull-mode agent delivered on this cluster, by owner: " +
				"a restarted agent removes from it what the hub no longer lists, after its removal grace. Deleting it leaves such objects behind."}},
		Data: data,
	}
}

// save writes owners when they differ from what the ConfigMap holds.
func (m *memory) save(ctx context.Context, owners map[render.Owner]remembered) error {
	if reflect.DeepEqual(owners, m.saved) || (len(owners) == 0 && len(m.saved) == 0) {
		return nil
	}
	data, err := formatMemory(owners)
	if err != nil {
		return err
	}
	cm := m.cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[memoryKey] = data
	cms := m.spoke.CoreV1().ConfigMaps(m.namespace)
	out, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) { // deleted by someone: written again
		out, err = cms.Create(ctx, m.configMap(map[string]string{memoryKey: data}), metav1.CreateOptions{})
	}
	if apierrors.IsConflict(err) { // changed by someone: read again, written on the next save
		if fresh, gerr := cms.Get(ctx, MemoryName, metav1.GetOptions{}); gerr == nil {
			m.cm = fresh
		}
	}
	if err != nil {
		return fmt.Errorf("write the agent's ConfigMap %s/%s on the spoke: %w", m.namespace, MemoryName, err)
	}
	m.cm, m.saved = out, owners
	return nil
}

func formatMemory(owners map[render.Owner]remembered) (string, error) {
	byName := make(map[string]remembered, len(owners))
	for o, r := range owners {
		byName[o.String()] = r
	}
	b, err := json.Marshal(byName) // map keys are sorted: the same owners are the same text
	return string(b), err
}

func parseMemory(data string) (map[render.Owner]remembered, error) {
	out := map[render.Owner]remembered{}
	if data == "" {
		return out, nil
	}
	byName := map[string]remembered{}
	if err := json.Unmarshal([]byte(data), &byName); err != nil {
		return nil, fmt.Errorf("it does not decode: %w", err)
	}
	for n, r := range byName {
		o, ok := render.ParseOwner(n)
		if !ok {
			return nil, fmt.Errorf("%q is not an owner", n)
		}
		out[o] = r
	}
	return out, nil
}
