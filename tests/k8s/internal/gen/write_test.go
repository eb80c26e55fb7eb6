package gen

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Every spelling of a quantity parses back to the same value.
func TestQuantityForms(t *testing.T) {
	for _, q := range []string{"0", "1", "100m", "1500m", "2", "128Mi", "512Mi", "1Gi", "1e9", "6G", "3000Mi", "110", "64Mi", "250m"} {
		v := resource.MustParse(q)
		forms := quantityForms(v)
		if len(forms) < 2 && q != "0" {
			t.Errorf("%s: only %v", q, forms)
		}
		for _, f := range forms {
			w, err := resource.ParseQuantity(f)
			if err != nil || w.Cmp(v) != 0 {
				t.Errorf("%s: form %q is %v (%v)", q, f, w.String(), err)
			}
		}
	}
}

// The same seed gives the same case; the YAML of a case does not change between writes.
func TestDeterministic(t *testing.T) {
	cfg := DefaultConfig()
	a, err := Generate(7, cfg).YAML()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(7, cfg).YAML()
	if string(a) != string(b) {
		t.Fatal("two runs of seed 7 differ")
	}
	c, _ := Generate(8, cfg).YAML()
	if string(a) == string(c) {
		t.Fatal("seeds 7 and 8 give the same case")
	}
}

func TestParseFeatures(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.ParseFeatures("none,+taints"); err != nil {
		t.Fatal(err)
	}
	on := cfg.On()
	if len(on) != 2 || on[0] != "base" || on[1] != "taints" {
		t.Fatalf("on %v", on)
	}
	if err := cfg.ParseFeatures("nosuch"); err == nil {
		t.Fatal("unknown feature accepted")
	}
}
