// Package podhash states what gpusched's pod-template-hash (src/manifest/podhash.c) must
// know of the Go types: the Deployment controller hashes the PodTemplateSpec as go-spew
// prints it (k8s.io/utils/dump.ForHash), every field with its Go type, so the C side carries
// the field list of each type reachable from v1.PodTemplateSpec. Schema derives that list from
// k8s.io/api's types by reflection; the test holds the C table to it.
package podhash

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// expr is a type expression of the C table: s string, b bool, i signed integer, u unsigned
// integer, *X pointer, [X slice, mX map from string, {NAME} struct, q resource.Quantity,
// t metav1.Time, o intstr.IntOrString, f metav1.FieldsV1.
func expr(t reflect.Type, need map[reflect.Type]bool) string {
	switch t {
	case reflect.TypeOf(resource.Quantity{}):
		return "q"
	case reflect.TypeOf(metav1.Time{}):
		return "t"
	case reflect.TypeOf(intstr.IntOrString{}):
		return "o"
	case reflect.TypeOf(metav1.FieldsV1{}):
		return "f"
	}
	switch t.Kind() {
	case reflect.String:
		return "s"
	case reflect.Bool:
		return "b"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "i"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "u"
	case reflect.Ptr:
		return "*" + expr(t.Elem(), need)
	case reflect.Slice:
		return "[" + expr(t.Elem(), need)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic("map key " + t.String())
		}
		return "m" + expr(t.Elem(), need)
	case reflect.Struct:
		need[t] = true
		return "{" + t.String() + "}"
	}
	panic("kind " + t.String())
}

// jsonName is the field's JSON key ("" for an inline embedded struct).
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	name := strings.Split(tag, ",")[0]
	if name == "" && (strings.Contains(tag, ",inline") || f.Anonymous) {
		return ""
	}
	if name == "" || name == "-" {
		panic("no json name: " + f.Name)
	}
	return name
}

// Schema returns the C table's lines: one per struct type reachable from v1.PodTemplateSpec,
// sorted, "TYPE=FIELD,JSON,GOTYPE,EXPR;..." with the fields in declaration order.
func Schema() []string {
	need := map[reflect.Type]bool{reflect.TypeOf(corev1.PodTemplateSpec{}): true}
	done := map[reflect.Type]string{}
	for len(need) > len(done) {
		for t := range need {
			if _, ok := done[t]; ok {
				continue
			}
			var fields []string
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				fields = append(fields, fmt.Sprintf("%s,%s,%s,%s", f.Name, jsonName(f), f.Type.String(), expr(f.Type, need)))
			}
			done[t] = t.String() + "=" + strings.Join(fields, ";")
		}
	}
	var out []string
	for _, l := range done {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}
