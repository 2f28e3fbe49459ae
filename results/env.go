package results

import (
	"encoding/json"
	"fmt"
)

// EnvStrings returns the object under key of a summary's Env (the `rtload
// env` facts: decoded from summary.json as map[string]any, or the facts
// struct itself before it was written) as strings, e.g. "kernel_config"
// → {"CONFIG_HARDENED_USERCOPY": "y"}; nil when absent or not an object.
// Non-string values are printed with fmt's %v.
func EnvStrings(env any, key string) map[string]string {
	m, ok := env.(map[string]any)
	if !ok {
		b, err := json.Marshal(env)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return nil
		}
	}
	sub, ok := m[key].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(sub))
	for k, v := range sub {
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}
