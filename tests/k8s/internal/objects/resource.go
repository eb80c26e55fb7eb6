package objects

// The resource.k8s.io objects (DeviceClass, ResourceSlice, ResourceClaim,
// ResourceClaimTemplate, DeviceTaintRule) are validated as the API server validates them on
// create (pkg/apis/resource/validation), so a generated case or a scenario the API server
// would refuse is an error naming the object, not a silent answer. Status is not validated:
// an input claim's status.allocation is what a scheduler wrote before, as stored.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"

	resourcev1 "k8s.io/api/resource/v1"
)

func named(acc metav1.Object) string {
	if acc.GetNamespace() != "" {
		return acc.GetNamespace() + "/" + acc.GetName()
	}
	return acc.GetName()
}

// validateResource validates a resource.k8s.io object as on create; other kinds pass.
func validateResource(obj runtime.Object) error {
	var errs field.ErrorList
	convert := func(in, out any) bool {
		if err := legacyscheme.Scheme.Convert(in, out, nil); err != nil {
			errs = append(errs, field.InternalError(nil, err))
			return false
		}
		return true
	}
	switch o := obj.(type) {
	case *resourcev1.DeviceClass:
		var in resource.DeviceClass
		if convert(o, &in) {
			errs = resourcevalidation.ValidateDeviceClass(&in)
		}
	case *resourcev1.ResourceSlice:
		var in resource.ResourceSlice
		if convert(o, &in) {
			errs = resourcevalidation.ValidateResourceSlice(&in)
		}
	case *resourcev1.ResourceClaim:
		var in resource.ResourceClaim
		if convert(o, &in) {
			errs = resourcevalidation.ValidateResourceClaim(&in)
		}
	case *resourcev1.ResourceClaimTemplate:
		var in resource.ResourceClaimTemplate
		if convert(o, &in) {
			errs = resourcevalidation.ValidateResourceClaimTemplate(&in)
		}
	case *resourcev1.DeviceTaintRule:
		var in resource.DeviceTaintRule
		if convert(o, &in) {
			errs = resourcevalidation.ValidateDeviceTaintRule(&in)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.ToAggregate()
}
