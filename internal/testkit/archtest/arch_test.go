package archtest

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/tinyctl/tinyctl"

var (
	loadOnce sync.Once
	loaded   []*packages.Package
	loadErr  error
)

// modulePackages loads every package of the module (tests excluded) with
// its syntax and type information, once.
func modulePackages(t *testing.T) []*packages.Package {
	t.Helper()
	loadOnce.Do(func() {
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedSyntax |
				packages.NeedTypes | packages.NeedTypesInfo,
			Dir: "../../..",
		}
		loaded, loadErr = packages.Load(cfg, module+"/...")
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	for _, p := range loaded {
		for _, err := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, err)
		}
	}
	return loaded
}

// writeVerbs are the client-go methods that change a cluster: the typed
// and dynamic clients' verbs, a RESTClient's POST and PUT requests, and
// evictions.
var writeVerbs = []string{"Create", "Update", "UpdateStatus", "Patch", "Apply", "ApplyStatus", "Delete", "DeleteCollection",
	"Post", "Put", "Evict", "EvictV1", "EvictV1beta1"}

// calls returns, per package path, where the functions match selects are
// called ("file:line: function").
func calls(t *testing.T, match func(*types.Func) bool) map[string][]string {
	found := map[string][]string{}
	for _, p := range modulePackages(t) {
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var id *ast.Ident
				switch fun := call.Fun.(type) {
				case *ast.SelectorExpr:
					id = fun.Sel
				case *ast.Ident:
					id = fun
				default:
					return true
				}
				if fn, ok := p.TypesInfo.Uses[id].(*types.Func); ok && match(fn) {
					found[p.PkgPath] = append(found[p.PkgPath], p.Fset.Position(call.Pos()).String()+": "+fn.FullName())
				}
				return true
			})
		}
	}
	return found
}

// onlyIn fails when a package other than owner makes one of found's calls,
// and when owner makes none (the check would match nothing).
func onlyIn(t *testing.T, found map[string][]string, owner, what string) {
	t.Helper()
	if len(found[module+"/"+owner]) == 0 {
		t.Errorf("package %s makes no %s: the check recognises nothing", owner, what)
	}
	var outside []string
	for pkg, at := range found {
		if pkg != module+"/"+owner {
			outside = append(outside, at...)
		}
	}
	slices.Sort(outside)
	if len(outside) > 0 {
		t.Errorf("%s outside package %s:\n%s", what, owner, strings.Join(outside, "\n"))
	}
}

func TestOnlyApplyCallsKubernetesWriteVerbs(t *testing.T) {
	found := calls(t, func(fn *types.Func) bool { return slices.Contains(writeVerbs, fn.Name()) && isClientGo(fn) })
	onlyIn(t, found, "apply", "Kubernetes writes (route them through apply.Manager)")
}

// isClientGo reports whether fn is a method declared in client-go.
func isClientGo(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	return ok && sig.Recv() != nil && fn.Pkg() != nil && strings.HasPrefix(fn.Pkg().Path(), "k8s.io/client-go/")
}

// TestOnlyProvisionWritesHelmReleases: installing, upgrading, rolling
// back or uninstalling a Helm release happens in package provision only.
func TestOnlyProvisionWritesHelmReleases(t *testing.T) {
	found := calls(t, isHelmWrite)
	onlyIn(t, found, "provision", "Helm release writes")
}

// isHelmWrite reports whether fn changes a Helm release: go-helm-client's
// install, upgrade, rollback and uninstall methods, and Helm's own actions
// that do.
func isHelmWrite(fn *types.Func) bool {
	if fn.Pkg() == nil {
		return false
	}
	path, name := fn.Pkg().Path(), fn.Name()
	switch {
	case strings.HasPrefix(path, "github.com/mittwald/go-helm-client"):
		return slices.ContainsFunc([]string{"Install", "Upgrade", "Rollback", "Uninstall"}, func(p string) bool { return strings.HasPrefix(name, p) })
	case strings.HasPrefix(path, "helm.sh/helm/"):
		return slices.Contains([]string{"NewInstall", "NewUpgrade", "NewRollback", "NewUninstall"}, name)
	}
	return false
}

// forbidden lists, per package (prefix), the module packages it must not
// import: arrows point from the CLI down to api.
var forbidden = map[string][]string{
	"api":    {"render", "apply", "bus", "reconcile", "serve", "provision", "internal", "client", "cmd", "worker"},
	"render": {"apply", "bus", "reconcile", "serve", "provision", "internal", "client", "cmd"},
	"apply":  {"bus", "render", "reconcile", "serve", "provision", "internal", "client", "cmd"},
	"bus":    {"apply", "render", "reconcile", "serve", "provision", "internal", "client", "cmd"},
	// The loop knows its ports; the stores are adapted in serve/wire.
	"reconcile": {"serve", "provision", "internal", "client", "cmd", "bus/kv", "bus/specs", "bus/status", "bus/fleet", "bus/lease", "bus/tenants"},
	"provision": {"reconcile", "serve", "bus", "internal", "client", "cmd"},
	"serve":     {"provision", "internal", "client", "cmd"},
	"client":    {"apply", "reconcile", "serve", "provision", "internal", "cmd"},
	// A worker imports the library without tinyctl's own dependencies:
	// only the environment contract.
	"worker": {"api", "render", "apply", "bus", "identity", "reconcile", "serve", "provision", "internal", "client", "cmd"},
}

// allowed are the exceptions to forbidden.
var allowed = map[string][]string{
	"worker": {"api/workerenv"},
}

func TestImportsPointOneWay(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, module), "/")
		rules := rulesFor(rel)
		for imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			if slices.Contains(allowed[rel], to) {
				continue
			}
			for _, bad := range rules {
				if bad == "" || to == bad || strings.HasPrefix(to, bad+"/") {
					t.Errorf("%s imports %s: arrows must point the other way", rel, to)
				}
			}
		}
	}
}

// rulesFor returns the forbidden imports of the package at rel: those of
// its longest matching prefix.
func rulesFor(rel string) []string {
	best := ""
	for prefix := range forbidden {
		if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return nil
	}
	return forbidden[best]
}

// maxExports is how many exported names (about 60) a package may have
// before it is doing more than one job. Methods that implement the
// standard interfaces (error, fmt.Stringer, json.Marshaler, ...) do not
// count: a reader does not learn them.
const maxExports = 64

// interfaceMethods are those standard methods (IsZero is what
// encoding/json's omitzero calls).
var interfaceMethods = []string{"Error", "Unwrap", "Is", "As", "String", "Format", "MarshalJSON", "UnmarshalJSON", "IsZero", "Read", "Write"}

func TestNoPackageIsTooBigToRead(t *testing.T) {
	for _, p := range modulePackages(t) {
		n := 0
		for _, f := range p.Syntax {
			n += exported(f)
		}
		if n > maxExports {
			t.Errorf("%s exports %d names (more than %d): split it by job", p.PkgPath, n, maxExports)
		}
	}
}

// exported counts the exported top-level names and methods of f.
func exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && slices.Contains(interfaceMethods, d.Name.Name) {
				continue
			}
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv)) {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	id, ok := t.(*ast.Ident)
	return ok && token.IsExported(id.Name)
}

func TestStatusModelLivesNextToTheComponent(t *testing.T) {
	for _, p := range modulePackages(t) {
		scope := p.Types.Scope()
		for _, name := range []string{"Status", "Condition", "Child"} {
			obj, ok := scope.Lookup(name).(*types.TypeName)
			if !ok {
				continue
			}
			if p.PkgPath != module+"/api" {
				t.Errorf("%s declares the status model type %s: it belongs in package api", p.PkgPath, obj.Name())
			}
		}
	}
}

// testKit holds the rigs that only tests use (API servers, NATS servers,
// proxies, fault drivers) and the end-to-end tests: nothing that ships.
const testKit = "internal/testkit"

// TestNothingThatShipsImportsTheTestKit: no package outside the test kit
// imports it (test files aside), so nothing the binary or the public
// packages contain depends on a rig.
func TestNothingThatShipsImportsTheTestKit(t *testing.T) {
	kits := 0
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, module), "/")
		if rel == testKit || strings.HasPrefix(rel, testKit+"/") {
			kits++
			continue
		}
		for imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/"+testKit+"/") {
				t.Errorf("%s imports %s: code that ships must not depend on a test rig", rel, strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	if kits == 0 {
		t.Errorf("no package under %s: the check recognises nothing", testKit)
	}
}

// publicAPIs are the packages a Go program imports to drive tinyctl: what
// they export must not show a transport type (bus/...), so that bus stays
// free to change and callers never decode bytes themselves.
var publicAPIs = []string{"client", "client/progress", "client/queues", "client/events"}

// TestThePublicClientShowsNoTransportType walks every exported name of
// the public packages (functions' parameters and results, exported struct
// fields, methods of exported types) for a type of bus/....
func TestThePublicClientShowsNoTransportType(t *testing.T) {
	seen := 0
	for _, p := range modulePackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, module), "/")
		if !slices.Contains(publicAPIs, rel) {
			continue
		}
		seen++
		scope := p.Types.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			w := &typeWalk{seen: map[types.Type]bool{}}
			w.walk(obj.Type())
			for _, bad := range w.transport {
				t.Errorf("%s.%s shows the transport type %s", rel, name, bad)
			}
		}
	}
	if seen != len(publicAPIs) {
		t.Errorf("found %d of the public packages %v: the check looked at too few", seen, publicAPIs)
	}
}

// typeWalk collects the bus types a type shows.
type typeWalk struct {
	seen      map[types.Type]bool
	transport []string
}

func (w *typeWalk) walk(t types.Type) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		if w.transportName(t.Obj()) {
			return
		}
		w.walk(types.Unalias(t))
	case *types.Named:
		if w.transportName(t.Obj()) {
			return
		}
		if pkg := t.Obj().Pkg(); pkg != nil && strings.HasPrefix(pkg.Path(), module+"/") {
			w.walk(t.Underlying())
			for m := range t.Methods() {
				if m.Exported() {
					w.walk(m.Type())
				}
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				w.walk(m.Type())
			}
		}
	case *types.Pointer:
		w.walk(t.Elem())
	case *types.Slice:
		w.walk(t.Elem())
	case *types.Array:
		w.walk(t.Elem())
	case *types.Map:
		w.walk(t.Key())
		w.walk(t.Elem())
	case *types.Chan:
		w.walk(t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.walk(v.Type())
		}
		for v := range t.Results().Variables() {
			w.walk(v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				w.walk(f.Type())
			}
		}
	}
}

// transportName records obj when it is declared in bus/....
func (w *typeWalk) transportName(obj types.Object) bool {
	pkg := obj.Pkg()
	if pkg == nil || !strings.HasPrefix(pkg.Path(), module+"/bus") {
		return false
	}
	w.transport = append(w.transport, pkg.Path()+"."+obj.Name())
	return true
}

// maxFuncLines is how long a function (its declaration to its closing
// brace) may be before it is doing more than one job.
const maxFuncLines = 60

func TestNoFunctionIsTooLongToRead(t *testing.T) {
	funcs := 0
	for _, p := range modulePackages(t) {
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				funcs++
				start, end := p.Fset.Position(fd.Pos()), p.Fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines (more than %d): split it by job", start, fd.Name.Name, n, maxFuncLines)
				}
			}
		}
	}
	if funcs == 0 {
		t.Error("no function found: the check measured nothing")
	}
}

// TestTheTypeWalkSeesThroughAliasesAndInterfaces is the walk's negative
// control: a bus type reached through an alias, an interface's method, a
// named type's method or a struct field is found, and one behind an
// unexported field is not.
func TestTheTypeWalkSeesThroughAliasesAndInterfaces(t *testing.T) {
	bus := types.NewPackage(module+"/bus/kv", "kv")
	pub := types.NewPackage(module+"/client", "client")
	entry := types.NewNamed(types.NewTypeName(0, bus, "Entry", nil), types.NewStruct(nil, nil), nil)
	returns := func(res types.Type) *types.Signature {
		return types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(0, pub, "", res)), false)
	}
	alias := types.NewAlias(types.NewTypeName(0, pub, "Entry", nil), entry)
	iface := types.NewInterfaceType([]*types.Func{types.NewFunc(0, pub, "Next", returns(entry))}, nil)
	withMethod := types.NewNamed(types.NewTypeName(0, pub, "Watcher", nil), types.NewStruct(nil, nil), nil)
	withMethod.AddMethod(types.NewFunc(0, pub, "Last", returns(types.NewPointer(entry))))
	field := func(name string) *types.Struct {
		return types.NewStruct([]*types.Var{types.NewField(0, pub, name, types.NewSlice(entry), false)}, nil)
	}
	for _, c := range []struct {
		name  string
		typ   types.Type
		found int
	}{
		{"alias", alias, 1},
		{"interface method", iface, 1},
		{"named type's method", withMethod, 1},
		{"exported field", field("Entries"), 1},
		{"unexported field", field("entries"), 0},
	} {
		w := &typeWalk{seen: map[types.Type]bool{}}
		w.walk(c.typ)
		if len(w.transport) != c.found {
			t.Errorf("%s: the walk found %v, want %d transport type(s)", c.name, w.transport, c.found)
		}
	}
}
