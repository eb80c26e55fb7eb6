package objects

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type jsonRawObject = json.RawMessage

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// withKind sets kind and apiVersion on a list item that names none.
func withKind(raw []byte, kind, version string) []byte {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m["kind"] = kind
	if _, ok := m["apiVersion"]; !ok {
		m["apiVersion"] = version
	}
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

func metaAccessor(o runtime.Object) (metav1.Object, error) {
	acc, err := meta.Accessor(o)
	if err != nil {
		return nil, fmt.Errorf("%T has no metadata: %v", o, err)
	}
	return acc, nil
}
