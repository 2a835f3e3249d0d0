package chart

import (
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// Values merges values files (later ones win, maps merge key by key) and then --set style
// assignments (key.sub=value, list[0]=value, a=b,c=d), as helm install's --values and --set do.
func Values(files, sets []string) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("values file: %w", err)
		}
		v := map[string]any{}
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("values file %s: %w", f, err)
		}
		out = merge(out, v)
	}
	for _, s := range sets {
		if err := strvals.ParseInto(s, out); err != nil {
			return nil, fmt.Errorf("--set %s: %w (write key=value, key.sub=value or list[0]=value)", s, err)
		}
	}
	return out, nil
}

// merge returns base with over's keys over it, nested maps merged the same way.
func merge(base, over map[string]any) map[string]any {
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = merge(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}
