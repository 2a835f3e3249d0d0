package drift

// Project returns the fields of stored that desired sets, in desired's shape: what an object
// the API server stored holds where Flotilla's desired object says something. Lists of
// objects with a key field are matched item by item on it, as Compare matches them; other
// lists are taken whole. Fields stored does not hold (the server dropped or moved them, such
// as a Secret's stringData) are left out, so they are not compared. Neither input is
// modified; the result shares stored's values.
//
// Compared with Project(desired, server's answer to a dry run of desired), a live object
// holds what Flotilla's apply would store, even where the API server or its admission
// changes what Flotilla sent.
func Project(desired, stored map[string]any) map[string]any {
	out, _ := project(desired, stored).(map[string]any)
	return out
}

func project(desired, stored any) any {
	switch d := desired.(type) {
	case map[string]any:
		s, ok := stored.(map[string]any)
		if !ok {
			return stored
		}
		out := make(map[string]any, len(d))
		for k, dv := range d {
			if sv, ok := s[k]; ok {
				out[k] = project(dv, sv)
			}
		}
		return out
	case []any:
		s, ok := stored.([]any)
		key := mergeKey(d)
		if !ok || key == "" {
			return stored
		}
		out := make([]any, 0, len(d))
		for _, it := range d {
			dm := it.(map[string]any)
			for _, sit := range s {
				if sm, ok := sit.(map[string]any); ok && sameScalar(dm[key], sm[key]) {
					out = append(out, project(dm, sm))
					break
				}
			}
		}
		return out
	default:
		return stored
	}
}
