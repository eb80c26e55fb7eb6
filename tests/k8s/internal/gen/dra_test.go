package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpulabel.test/k8s/internal/objects"
)

// Every generated DRA case is something the API server accepts (objects.Load validates the
// resource.k8s.io objects as on create), the same seed gives the same case, and the feature
// leaves the other features' draws alone.
func TestDRACases(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.ParseFeatures("+dra"); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	dir := t.TempDir()
	for seed := int64(1); seed <= 60; seed++ {
		y, err := Generate(seed, cfg).YAML()
		if err != nil {
			t.Fatal(err)
		}
		y2, _ := Generate(seed, cfg).YAML()
		if string(y) != string(y2) {
			t.Fatalf("seed %d: two different cases", seed)
		}
		f := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(f, y, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := objects.Load([]string{f}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, k := range []string{"kind: DeviceClass", "kind: ResourceSlice", "kind: ResourceClaimTemplate", "kind: ResourceClaim\n", "kind: DeviceTaintRule", "sharedCounters", "allowMultipleAllocations", "firstAvailable", "allocationMode: All", "matchAttribute", "distinctAttribute", "adminAccess", "perDeviceNodeSelection", "allNodes", "nodeSelector:\n", "deviceclass.resource.kubernetes.io/", "tolerations", "reservedFor", "taints", "shareID", "consumedCapacity", "adminAccess: true\n        device", "driverVersion", "cores"} {
			if strings.Contains(string(y), k) {
				kinds[k]++
			}
		}
	}
	for _, k := range []string{"kind: DeviceClass", "kind: ResourceSlice", "kind: ResourceClaimTemplate", "kind: ResourceClaim\n", "kind: DeviceTaintRule", "sharedCounters", "allowMultipleAllocations", "firstAvailable", "allocationMode: All", "matchAttribute", "distinctAttribute", "adminAccess", "perDeviceNodeSelection", "allNodes", "deviceclass.resource.kubernetes.io/", "reservedFor", "taints", "shareID", "consumedCapacity", "driverVersion", "cores"} {
		if kinds[k] == 0 {
			t.Errorf("no case of 60 has %q", k)
		}
	}
	// without dra, a seed's case is what it was
	base := DefaultConfig()
	a, _ := Generate(5, base).YAML()
	b, _ := Generate(5, cfg).YAML()
	if strings.Contains(string(a), "resource.k8s.io") || len(b) <= len(a) {
		t.Fatalf("dra off: %d bytes, on: %d bytes", len(a), len(b))
	}
}
