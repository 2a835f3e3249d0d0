package fleetapis

// The core-kinds corpus (docs/fleet-apis.md, design section 2.2): kro's own examples and test
// fixtures that need only built-in Kubernetes kinds, read from the pinned kro module. Each case
// is one RGD, served on every spoke, and the instances created on one of them.
//
// Cases whose children are cluster-scoped or in other namespaces are served by a second
// APIPropagation, of tenancy Cluster (an RGD is served by one APIPropagation only): the
// saas-multi-tenant RGDs, kro's chained Tenant included, and six of kro's seven ack-controller
// CRD groups. The seventh, s3-crd-group.yaml, stays on the default tenancy (Namespace) and is
// refused, its CRD never written. core-dns runs twice: refused under the default tenancy in the
// first wave (refused at its first read outside its namespace, so nothing of it is written),
// then, its RGD moved to the Cluster APIPropagation, in the second wave, where it makes all
// that kro makes.
//
// Left out, and why:
//   - examples/aws/llm/llm.yaml: kro itself rejects it against Kubernetes' schemas (a boolean
//     where a nodeSelector value must be a string); internal/kro's corpus test covers that.
//   - test/e2e/chainsaw/check-unknown-fields brings its own CRD: it needs more than core kinds.
//   - examples/apigateway/vpc-lattice/instance.yaml is a WebService of rg-webservice.yaml (VPC
//     Lattice kinds), not a WebApp of rg-webapp.yaml, so that case has an instance written here.
var corpusCases = []corpusCase{
	{
		name: "printer-columns", rgd: "examples/kubernetes/additionalPrinterColumns/rg.yaml",
		instances: "examples/kubernetes/additionalPrinterColumns/instance.yaml",
		namespace: "corpus-printer-columns",
		children:  []string{"Deployment/test-app", "Service/test-app-service"},
		status:    map[string]string{"availableReplicas": "3"},
	},
	{
		name: "cel-functions", rgd: "examples/kubernetes/cel-functions/rg.yaml",
		instances: "examples/kubernetes/cel-functions/instance.yaml",
		namespace: "corpus-cel-functions",
		children:  []string{"Deployment/app", "Service/app"},
		// availableReplicas is the Deployment's times ten.
		status: map[string]string{"availableReplicas": "10"},
	},
	{
		// Same RGD name and kind (somethings.kro.run) as cel-functions: the second wave runs it
		// once cel-functions is gone.
		name: "defaults", rgd: "examples/kubernetes/defaults/rg.yaml", wave: 2,
		instances: "examples/kubernetes/defaults/instance.yaml",
		namespace: "corpus-defaults",
		// No resources and no status fields: the defaults are the API server's, from the CRD.
		spec: map[string]string{"number": "100", "config.field2": "200", "element": "e"},
	},
	{
		// kro's instance is in namespace default, as are its children (spec.namespace).
		name: "result-app", rgd: "examples/kubernetes/dogsvscats/result-app/rg.yaml",
		instances: "examples/kubernetes/dogsvscats/result-app/instance.yaml",
		namespace: "default",
		children: []string{"Deployment/result-app-demo-result", "Service/result-app-demo-result-service",
			"Ingress/result-app-demo-result-ingress"},
		// Without an ingress controller status.url stays absent, as under kro.
		status: map[string]string{"availableReplicas": "1", "serviceName": "result-app-demo-result-service"},
	},
	{
		name: "vote-app", rgd: "examples/kubernetes/dogsvscats/vote-app/rg.yaml",
		instances: "examples/kubernetes/dogsvscats/vote-app/instance.yaml",
		namespace: "default",
		children: []string{"Deployment/vote-app-demo-vote", "Service/vote-app-demo-vote-service",
			"Ingress/vote-app-demo-vote-ingress"},
		status: map[string]string{"availableReplicas": "2", "serviceName": "vote-app-demo-vote-service"},
	},
	{
		name: "worker-app", rgd: "examples/kubernetes/dogsvscats/worker-app/rg.yaml",
		instances: "examples/kubernetes/dogsvscats/worker-app/instance.yaml",
		namespace: "default",
		children:  []string{"Deployment/worker-app-demo-worker"},
		status:    map[string]string{"availableReplicas": "1"},
	},
	{
		// ACTIVE once the Job has completed (readyWhen completionTime).
		name: "job", rgd: "examples/kubernetes/job-example/rgd.yaml",
		instances: "examples/kubernetes/job-example/instance.yaml",
		namespace: "corpus-job",
		children:  []string{"Job/example-job-deployment-job", "Deployment/example-job-deployment"},
	},
	{
		// kro has no TenantApplication instance (tenant-instance.yaml is a Tenant); its children
		// go to the namespace named by tenantId, so the instance lives there. Served under tenancy
		// Cluster: the Tenant below makes TenantApplications in its own namespace, whose children
		// are elsewhere. tenant003, not the Tenant's tenant001, whose children these would be.
		name: "tenant-application", rgd: "examples/kubernetes/saas-multi-tenant/tenant-application-rgd.yaml",
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "TenantApplication",
			"metadata": {"name": "tenant003"}, "spec": {"tenantId": "tenant003"}}`,
		namespace: "tenant003", tenancy: "Cluster",
		children: []string{"Deployment/tenant003-deployment", "Service/tenant003-service"},
	},
	{
		// kro's instance has no namespace; spec.namespace defaults to default, where the
		// instance is created. The Ingress exists; with no ingress controller status.url stays
		// absent, as under kro.
		name: "webapp", rgd: "examples/kubernetes/webapp/rg.yaml",
		instances: "examples/kubernetes/webapp/instance.yaml",
		namespace: "default",
		children:  []string{"Deployment/test-app", "Service/test-app", "Ingress/test-app"},
		status:    map[string]string{"availableReplicas": "1"},
	},
	{
		// Same RGD name and kind (webapp.kro.run) as the webapp example: second wave. Its
		// directory's instance.yaml is for another RGD, so the instance is written here.
		name: "lattice-webapp", rgd: "examples/apigateway/vpc-lattice/rg-webapp.yaml", wave: 2,
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
			"metadata": {"name": "lattice-app"}, "spec": {"name": "lattice-app"}}`,
		namespace: "default",
		children:  []string{"Deployment/lattice-app", "Service/lattice-app"},
		status:    map[string]string{"availableReplicas": "3"},
	},

	// kro's chainsaw cases. Their instance files have no namespace (chainsaw makes one per test).
	{
		// spec.namespace names where the ConfigMap goes: kro's file says default, so the
		// instance is created in default too.
		name: "cel-random", rgd: "test/e2e/chainsaw/cel-random-namespaced-function/rgd.yaml",
		instances: "test/e2e/chainsaw/cel-random-namespaced-function/instance.yaml",
		namespace: "default",
		// The ConfigMap's name is random, seeded by the instance's uid.
		children: []string{"ConfigMap/*"},
		asserts:  chainsaw("cel-random-namespaced-function", "assert-instance-ready.yaml"),
	},
	{
		name: "arbitrary-objects", rgd: "test/e2e/chainsaw/check-arbitary-objects/rgd.yaml",
		instances: "test/e2e/chainsaw/check-arbitary-objects/instance.yaml",
		namespace: "corpus-arbitrary-objects",
		spec:      map[string]string{"values.structural-type.with-additional.nested": "fields"},
		asserts:   chainsaw("check-arbitary-objects", "instance-create-assert.yaml", "instancecrd-assert.yaml"),
	},
	{
		// The external reference is a ConfigMap in namespace default; under the default tenancy
		// an instance reads only its own namespace, so the instance is created in default.
		name: "external-references", rgd: "test/e2e/chainsaw/check-external-references/rgd.yaml",
		instances: "test/e2e/chainsaw/check-external-references/instance.yaml",
		prereqs:   []string{"test/e2e/chainsaw/check-external-references/configmap.yaml"},
		namespace: "default",
		children:  []string{"ConfigMap/config"},
		childData: map[string]string{"ConfigMap/config": "Hello, World!"},
		asserts:   chainsaw("check-external-references", "instance-assert.yaml", "owned.yaml"),
	},
	{
		name: "instance-creation", rgd: "test/e2e/chainsaw/check-instance-creation/rgd.yaml",
		instances: "test/e2e/chainsaw/check-instance-creation/instance.yaml",
		namespace: "corpus-instance-creation",
		children:  []string{"Deployment/test-instance"},
		// A broken instance beside kro's: its Deployment is invalid, so it shows ERROR, as under
		// kro, and the hub names it among the instances not ready.
		broken: `{"apiVersion": "kro.run/v1alpha1", "kind": "CheckInstanceCreationSimpleDeployment",
			"metadata": {"name": "broken"}, "spec": {"replicas": -1}}`,
		brokenMessage: "spec.replicas",
		asserts:       chainsaw("check-instance-creation", "instance-create-assert.yaml", "deployment-assert.yaml", "instancecrd-assert.yaml"),
	},
	{
		name: "instance-update", rgd: "test/e2e/chainsaw/check-instance-update/rgd.yaml",
		instances:     "test/e2e/chainsaw/check-instance-update/instance.yaml",
		namespace:     "corpus-instance-update",
		children:      []string{"Deployment/test-instance"},
		asserts:       chainsaw("check-instance-update", "instance-create-assert.yaml", "deployment-assert.yaml", "instancecrd-assert.yaml"),
		update:        "test/e2e/chainsaw/check-instance-update/instance-update.yaml",
		updateAsserts: chainsaw("check-instance-update", "deployment-update-assert.yaml"),
	},
	{
		name: "multi-resource", rgd: "test/e2e/chainsaw/check-multi-resource-rgd/rgd.yaml",
		instances: "test/e2e/chainsaw/check-multi-resource-rgd/instance.yaml",
		namespace: "corpus-multi-resource",
		children: []string{"ConfigMap/test-app-config", "Service/test-app-service",
			"Deployment/test-app-deployment", "HorizontalPodAutoscaler/test-app-hpa"},
		asserts: chainsaw("check-multi-resource-rgd", "instance-create-assert.yaml", "deployment-assert.yaml",
			"configmap-assert.yaml", "service-assert.yaml", "hpa-assert.yaml", "instancecrd-assert.yaml"),
		update:        "test/e2e/chainsaw/check-multi-resource-rgd/instance-update.yaml",
		updateAsserts: chainsaw("check-multi-resource-rgd", "deployment-update-assert.yaml", "hpa-update-assert.yaml"),
	},
	{
		name: "required-default", rgd: "test/e2e/chainsaw/check-required-default-interactions/rgd.yaml",
		instances: "test/e2e/chainsaw/check-required-default-interactions/valid-instance.yaml",
		namespace: "corpus-required-default",
		children:  []string{"ConfigMap/test-app-config"},
		spec:      map[string]string{"database.port": "8080", "retry.maxRetries": "3", "environment": "development"},
		asserts:   chainsaw("check-required-default-interactions", "valid-instance-assert.yaml", "instancecrd-assert.yaml"),
	},
	{
		// No instance file: chainsaw only checks the CRD. An instance with the defaults.
		name: "rgd-creation", rgd: "test/e2e/chainsaw/check-rgd-creation/rgd.yaml",
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "CheckRGDCreationSimpleDeployment",
			"metadata": {"name": "created"}, "spec": {}}`,
		namespace: "corpus-rgd-creation",
		children:  []string{"Deployment/created"},
		asserts:   chainsaw("check-rgd-creation", "instancecrd-assert.yaml"),
	},
	{
		name: "rgd-deletion", rgd: "test/e2e/chainsaw/check-rgd-deletion/rgd.yaml",
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "SimpleDeploymentForDeletion",
			"metadata": {"name": "deleted"}, "spec": {}}`,
		namespace: "corpus-rgd-deletion",
		children:  []string{"Deployment/deleted"},
		asserts:   chainsaw("check-rgd-deletion", "instancecrd-assert.yaml"),
	},
	{
		name: "validation-markers", rgd: "test/e2e/chainsaw/check-validation-markers/rgd.yaml",
		instances: "test/e2e/chainsaw/check-validation-markers/valid-instance.yaml",
		namespace: "corpus-validation-markers",
		children:  []string{"ConfigMap/valid-test-app-config"},
		asserts:   chainsaw("check-validation-markers", "valid-instance-assert.yaml", "configmap-assert.yaml", "instancecrd-assert.yaml"),
	},

	// kro's upgrade fixtures: their instances are in namespace upgrade-test, as kro's suite
	// creates them, with the external ConfigMap the suite creates there.
	upgradeCase("conditional", []string{"ConfigMap/test-conditional-off-configmap",
		"ConfigMap/test-conditional-on-configmap", "ConfigMap/test-conditional-on-monitoring"}),
	upgradeCase("deletion-target", []string{"ConfigMap/test-deletion-target-configmap"}),
	withChildData(withPrereq(upgradeCase("external-ref", []string{"ConfigMap/test-extref-configmap"})),
		map[string]string{"ConfigMap/test-extref-configmap": "production"}),
	// forEach: [] is no forEach at all (kro's upgrade suite expects the one ConfigMap).
	upgradeCase("foreach-empty", []string{"ConfigMap/test-foreachempty-configmap"}),
	upgradeCase("foreach-nil", []string{"ConfigMap/test-foreachnil-configmap"}),
	upgradeCase("group-default", []string{"ConfigMap/test-groupdefault-configmap"}),
	upgradeCase("group-explicit", []string{"ConfigMap/test-groupexplicit-configmap"}),
	upgradeCase("includewhen-empty", []string{"ConfigMap/test-includeempty-configmap"}),
	upgradeCase("includewhen-nil", []string{"ConfigMap/test-includenil-configmap"}),
	withStatus(withPrereq(upgradeCase("legacy-selector", nil)), map[string]string{"collectionSize": "1"}),
	upgradeCase("metadata-empty", []string{"ConfigMap/test-metaempty-configmap"}),
	upgradeCase("metadata-nil", []string{"ConfigMap/test-metanil-configmap"}),
	upgradeCase("mixed-nil-empty", []string{"ConfigMap/test-mixed-full", "ConfigMap/test-mixed-minimal"}),
	upgradeCase("multi-dependency", []string{"ConfigMap/test-multidep-config",
		"Deployment/test-multidep-deployment", "Service/test-multidep-deployment"}),
	upgradeCase("readywhen-empty", []string{"ConfigMap/test-readyempty-configmap"}),
	upgradeCase("readywhen-nil", []string{"ConfigMap/test-readynil-configmap"}),
	upgradeCase("resources-reverse-order", []string{"ConfigMap/test-reverseorder-zzsecond",
		"ConfigMap/test-reverseorder-aafirst"}),
	withStatus(upgradeCase("simple-deployment", []string{"Deployment/test-simple-deployment",
		"Service/test-simple-service"}), map[string]string{"availableReplicas": "1"}),
	upgradeCase("validation-markers", []string{"ConfigMap/test-validated-configmap"}),

	// Refused under the default tenancy: children cluster-scoped or in another namespace.
	{
		// A ClusterRole and a ClusterRoleBinding, and a ServiceAccount in spec.namespace
		// (default): those are refused. As under kro, what can be applied is: the ConfigMap and
		// the Service, in the instance's namespace (the Deployment needs the ServiceAccount).
		// The Service's address: see core-dns-cluster.
		name: "core-dns", rgd: "examples/kubernetes/core-dns/core-dns.yaml",
		instances: "examples/kubernetes/core-dns/coredns-instance.yaml",
		namespace: "corpus-core-dns", serviceIPAt: "values.service",
		// Refused at its first read outside its namespace (its ClusterRole), before anything
		// is applied: no child at all, not even those of its own namespace.
		children: nil,
		refused: []auditRef{
			{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "mynameis"},
			{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Name: "mynameis"},
			{Resource: "serviceaccounts", Namespace: "default", Name: "mynameis"},
		},
	},
	{
		// Its children are CustomResourceDefinitions. kro has no instance file.
		name: "s3-crds", rgd: "examples/aws/ack-controller/crds/s3-crd-group.yaml",
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "S3CRDGroup",
			"metadata": {"name": "s3"}, "spec": {}}`,
		namespace: "corpus-s3-crds",
		refused: []auditRef{
			{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "buckets.s3.services.k8s.aws"},
		},
	},

	// Served under tenancy Cluster: children cluster-scoped and in other namespaces.
	{
		// The second wave: the RGD of the first wave's core-dns, refused, moves to the Cluster
		// APIPropagation, and the instance makes all that kro makes. kro's file leaves
		// values.service empty, whose default clusterIP, 10.100.123.45, is in EKS's default
		// Service network, not in the spoke's (10.97-99.0.0/16): the API server would reject the
		// Service ("the provided network does not match the current range") and the instance
		// show ERROR, as under kro on such a cluster. So the instance names an address of its
		// spoke's network instead (serviceIPAt).
		name: "core-dns-cluster", rgd: "examples/kubernetes/core-dns/core-dns.yaml", wave: 2,
		instances: "examples/kubernetes/core-dns/coredns-instance.yaml",
		namespace: "corpus-core-dns", tenancy: "Cluster", serviceIPAt: "values.service",
		children: []string{"ConfigMap/mynameis", "Deployment/mynameis", "Service/mynameis",
			"ClusterRole//mynameis", "ClusterRoleBinding//mynameis", "ServiceAccount/default/mynameis"},
	},
	{
		// A Namespace and objects in it. kro has no TenantEnvironment instance file.
		name: "tenant-environment", rgd: "examples/kubernetes/saas-multi-tenant/tenant-environment-rgd.yaml",
		inline: `{"apiVersion": "kro.run/v1alpha1", "kind": "TenantEnvironment",
			"metadata": {"name": "tenant002"}, "spec": {"tenantId": "tenant002"}}`,
		namespace: "corpus-tenant-environment", tenancy: "Cluster",
		children: []string{"Namespace//tenant002", "ResourceQuota/tenant002/tenant002-quota",
			"NetworkPolicy/tenant002/tenant002-isolation"},
	},
	{
		// kro's Tenant (in default) chains a TenantEnvironment and a TenantApplication, both
		// instances of the two RGDs above, made in default on the same spoke and expanded there
		// in turn: their children are the Tenant's too, here.
		name: "tenant", rgd: "examples/kubernetes/saas-multi-tenant/tenant-rgd.yaml",
		instances: "examples/kubernetes/saas-multi-tenant/tenant-instance.yaml",
		namespace: "default", tenancy: "Cluster",
		children: []string{"TenantEnvironment/tenant001", "TenantApplication/tenant001",
			"Namespace//tenant001", "ResourceQuota/tenant001/tenant001-quota",
			"NetworkPolicy/tenant001/tenant001-isolation",
			"Deployment/tenant001/tenant001-deployment", "Service/tenant001/tenant001-service"},
		chained: map[string]int32{"tenantenvironment.kro.run": 1, "tenantapplication.kro.run": 1},
	},
	crdGroupCase("ec2", "EC2CRDGroup"),
	crdGroupCase("ecr", "ECRCRDGroup"),
	crdGroupCase("ecr-public", "ECRPublicCRDGroup"),
	crdGroupCase("eks", "EKSCRDGroup"),
	crdGroupCase("iam", "IAMCRDGroup"),
	crdGroupCase("sqs", "SQSCRDGroup"),
}

// corpusCase is one RGD of the corpus and the instances made of it.
type corpusCase struct {
	name string // short, unique
	rgd  string // file, relative to the kro module
	wave int    // 2: after the first wave is gone (its RGD's name is taken by a first-wave RGD)
	// instances is kro's file of instances of the RGD's kind (relative to the module), or
	// inline one written here (JSON) when kro has none.
	instances, inline string
	// namespace is where the instances are created (a file's own namespace must agree).
	namespace string
	// prereqs are kro's files applied on the spoke before the instances (external references).
	prereqs []string
	// children are Kind/name of every child on the spoke (all instances of the case together),
	// in namespace; Kind/* stands for one child of that kind whatever its name. A child
	// elsewhere (tenancy Cluster) is Kind/namespace/name, a cluster-scoped one Kind//name.
	children []string
	// childData: a child (Kind/name) and a string one of its data values must equal.
	childData map[string]string
	// status: dotted paths under status and the value each must have on every instance.
	status map[string]string
	// spec: dotted paths under spec and their value (defaults the CRD gives).
	spec map[string]string
	// asserts are kro's partial objects (chainsaw *-assert.yaml, relative to the module) the
	// instance, its children or its CRD must match once the instance is ACTIVE.
	asserts []string
	// update is kro's file updating the instance (chainsaw instance-update.yaml), applied once
	// the asserts hold; updateAsserts are then matched.
	update        string
	updateAsserts []string
	// broken is an instance written here (JSON) that kro cannot make ACTIVE: it must show ERROR
	// with brokenMessage in its Ready condition, and be named on the hub as not ready.
	broken, brokenMessage string
	// refused: the instance shows ERROR (the deliverer refuses its children under the default
	// tenancy) and none of these objects is ever written on the spoke.
	refused []auditRef
	// tenancy is the APIPropagation serving the RGD: "" (the default, Namespace) or "Cluster".
	tenancy string
	// serviceIPAt is a path under the instances' spec whose clusterIP and clusterIPs are set
	// to an address of the spoke's Service network (kro's defaults assume another network).
	serviceIPAt string
	// childrenFromRGD: the children are every template of the RGD, by its literal name
	// (cluster-scoped: kro's CRD groups).
	childrenFromRGD bool
	// chained counts, by RGD, the instances of other corpus APIs the case's instances make
	// (their children are the case's too); they are ACTIVE and counted on the hub.
	chained map[string]int32
}

// auditRef names an object in a spoke's audit log.
type auditRef struct{ Group, Resource, Namespace, Name string }

func upgradeCase(fixture string, children []string) corpusCase {
	dir := "test/upgrade/fixtures/" + fixture + "/"
	return corpusCase{name: "upgrade-" + fixture, rgd: dir + "rgd.yaml", instances: dir + "instance.yaml",
		namespace: "upgrade-test", children: children}
}

// withPrereq adds the external ConfigMap kro's upgrade suite creates in upgrade-test.
func withPrereq(c corpusCase) corpusCase {
	c.prereqs = []string{"test/upgrade/fixtures/01-external-configmap.yaml"}
	return c
}

func withStatus(c corpusCase, status map[string]string) corpusCase { c.status = status; return c }

func withChildData(c corpusCase, data map[string]string) corpusCase { c.childData = data; return c }

// crdGroupCase is one of kro's ack-controller CRD groups (examples/aws/ack-controller/crds),
// served under tenancy Cluster: its children are CustomResourceDefinitions. kro has no instance
// file; the CRD group's defaults are all it needs.
func crdGroupCase(service, kind string) corpusCase {
	return corpusCase{name: service + "-crds", rgd: "examples/aws/ack-controller/crds/" + service + "-crd-group.yaml",
		inline:    `{"apiVersion": "kro.run/v1alpha1", "kind": "` + kind + `", "metadata": {"name": "` + service + `"}, "spec": {}}`,
		namespace: "corpus-" + service + "-crds", tenancy: "Cluster", childrenFromRGD: true}
}

// chainsaw names files of one of kro's chainsaw cases.
func chainsaw(dir string, files ...string) []string {
	var out []string
	for _, f := range files {
		out = append(out, "test/e2e/chainsaw/"+dir+"/"+f)
	}
	return out
}
