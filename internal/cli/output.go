package cli

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-dev/flotilla/internal/install"
)

// objectOutputs says which -o values print objects rather than a table.
const objectOutputs = "json, yaml, name or jsonpath=TEMPLATE"

// objectPrinter returns the printer of an -o that prints objects, as kubectl does, without
// their managed fields; nil for any other -o.
func objectPrinter(output string) (printers.ResourcePrinter, error) {
	var p printers.ResourcePrinter
	switch {
	case output == "json":
		p = &printers.JSONPrinter{}
	case output == "yaml":
		p = &printers.YAMLPrinter{}
	case output == "name":
		p = &printers.NamePrinter{}
	case strings.HasPrefix(output, "jsonpath="):
		jp, err := printers.NewJSONPathPrinter(strings.TrimPrefix(output, "jsonpath="))
		if err != nil {
			return nil, usageError(fmt.Errorf("--output %s: %w", output, err))
		}
		jp.AllowMissingKeys(true)
		p = jp
	default:
		return nil, nil
	}
	return &printers.OmitManagedFieldsPrinter{Delegate: p}, nil
}

// printObjects prints objects with p: one alone when single, else a v1 List of them (each
// name on a line of its own for -o name), as kubectl get does.
func printObjects(w io.Writer, p printers.ResourcePrinter, single bool, objs ...client.Object) error {
	list := &metav1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}, Items: []runtime.RawExtension{}}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, install.Scheme())
		if err != nil {
			return err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		list.Items = append(list.Items, runtime.RawExtension{Object: o})
	}
	if _, byName := unwrap(p).(*printers.NamePrinter); byName || (single && len(objs) == 1) {
		for _, o := range objs {
			if err := p.PrintObj(o, w); err != nil {
				return err
			}
		}
		return nil
	}
	return p.PrintObj(list, w)
}

func unwrap(p printers.ResourcePrinter) printers.ResourcePrinter {
	if o, ok := p.(*printers.OmitManagedFieldsPrinter); ok {
		return o.Delegate
	}
	return p
}
