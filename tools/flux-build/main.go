// flux-build builds a folder the way Flux's kustomize-controller does, with the package it embeds
// (github.com/fluxcd/pkg/kustomize): it writes a kustomization.yaml where the folder has none, applies
// the Flux Kustomization's own fields (targetNamespace, namePrefix, nameSuffix, commonMetadata,
// patches, images, components), builds with a filesystem confined to the source root, with load
// restrictions off and no plugins, then removes what it wrote. It prints the resources as YAML.
//
// A test tool of peerpods-build, not part of the product.
//
//	flux-build [-kustomization FILE] [-no-remote-bases] ROOT PATH
//
// ROOT is the source's root (the Git checkout); PATH is the Kustomization's spec.path, relative to
// ROOT. FILE holds a kustomize.toolkit.fluxcd.io/v1 Kustomization whose spec supplies the fields.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func main() {
	kustomizationFile := flag.String("kustomization", "", "a Flux Kustomization (YAML) whose spec supplies the build's options")
	noRemoteBases := flag.Bool("no-remote-bases", false, "refuse remote bases (kustomize-controller's --no-remote-bases)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: flux-build [-kustomization FILE] [-no-remote-bases] ROOT PATH")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *kustomizationFile, !*noRemoteBases); err != nil {
		fmt.Fprintln(os.Stderr, "flux-build:", err)
		os.Exit(1)
	}
}

func run(root, path, kustomizationFile string, allowRemoteBases bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if filepath.IsAbs(path) || strings.HasPrefix(filepath.Clean(path), "..") {
		return fmt.Errorf("PATH %q must be relative to ROOT and inside it", path)
	}
	dir := filepath.Join(root, path)

	obj := map[string]interface{}{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]interface{}{"name": "flux-build"},
		"spec":       map[string]interface{}{},
	}
	if kustomizationFile != "" {
		data, err := os.ReadFile(kustomizationFile)
		if err != nil {
			return err
		}
		obj = map[string]interface{}{}
		if err := yaml.Unmarshal(data, &obj); err != nil {
			return fmt.Errorf("%s: %w", kustomizationFile, err)
		}
	}

	// kustomize-controller: NewGeneratorWithIgnore(workDir, spec.ignore, k), WriteFile(dirPath, the
	// original kustomization saved), SecureBuild(workDir, dirPath, !noRemoteBases), CleanDirectory.
	ignore, _, _ := unstructured.NestedString(obj, "spec", "ignore")
	generator := kustomize.NewGeneratorWithIgnore(root, ignore, unstructured.Unstructured{Object: obj})
	action, err := generator.WriteFile(dir, kustomize.WithSaveOriginalKustomization())
	if err != nil {
		return err
	}
	resources, buildErr := kustomize.SecureBuild(root, dir, allowRemoteBases)
	if err := kustomize.CleanDirectory(dir, action); err != nil {
		return err
	}
	if buildErr != nil {
		return buildErr
	}
	out, err := resources.AsYaml()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
