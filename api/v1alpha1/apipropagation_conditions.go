package v1alpha1

// The condition tree of an APIPropagation.
//
//	Accepted  True   Accepted           the spec is valid, the Placement exists in an admin
//	                                    namespace, and at least one RGD is served by this object
//	          False  InvalidSpec        the label selector is malformed, or placementRef names a
//	                                    namespace that is not an admin namespace
//	          False  PlacementNotFound  placementRef names no Placement
//	          False  NothingSelected    no existing RGD is chosen (or every chosen one is served
//	                                    by another APIPropagation: see status.apis)
//	Serving   True   Serving            every API is Established at its newest generation on
//	                                    every target cluster
//	          False  CompileFailed      an RGD does not compile against a cluster's schemas
//	          False  Blocked            a CRD change would break the served CRD on a cluster
//	          False  Conflict           a CRD of that name on a cluster is not the RGD's
//	          False  ApplyFailed        a cluster refused a CRD
//	          False  Progressing        CRDs are being delivered or waiting to be Established,
//	                                    or clusters are not connected yet
//	          False  NoClusters         the Placement chooses no cluster
//	          False  NotAccepted        Accepted is not True
//	Ready     True   Serving            Accepted and Serving are True (for kubectl wait)
//	          False  (the reason of the first of Accepted, Serving that is not True)
//	Reconciling True Progressing        present only while CRDs are on their way (kstatus)
//	Stalled   True   (its reason)       present only while not Accepted, or Serving is False for
//	                                    any reason but Progressing or NoClusters (kstatus Failed)
const (
	APIPropagationAccepted = "Accepted"
	APIPropagationServing  = "Serving"

	ReasonAccepted      = "Accepted"
	ReasonServing       = "Serving"
	ReasonCompileFailed = "CompileFailed"
	ReasonBlocked       = "Blocked"
	ReasonNotAccepted   = "NotAccepted"
)

// AnnotationRGDGeneration on a CRD Flotilla serves from a ResourceGraphDefinition is the RGD's
// metadata.generation it was compiled from: what the cluster serves, readable on the cluster
// and after a restart of the hub controller.
const AnnotationRGDGeneration = "flotilla.dev/rgd-generation"

// AnnotationAPIRevision on such a CRD names the revision of the ResourceGraphDefinition it was
// compiled from: a ControllerRevision in the admin namespace that keeps that RGD spec. A
// cluster where a newer spec does not compile, or would break the CRD, keeps serving this
// revision, and its instances are expanded with it, across restarts of the hub controller.
const AnnotationAPIRevision = "flotilla.dev/api-revision"
