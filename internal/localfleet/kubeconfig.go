package localfleet

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a self-contained admin kubeconfig (certificates inlined) whose cluster,
// user and context are all named after the plane.
func (p *Plane) writeKubeconfig(path string) error {
	ca, err := p.pki.read(caCertFile)
	if err != nil {
		return err
	}
	cert, err := p.pki.read(adminCertFile)
	if err != nil {
		return err
	}
	key, err := p.pki.read(adminKeyFile)
	if err != nil {
		return err
	}
	name := p.spec.Name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: p.Server(), CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}

// WriteKubeconfig writes the plane's admin kubeconfig to path (for example the hub.kubeconfig
// that `flotilla dev up` hands to the user).
func (p *Plane) WriteKubeconfig(path string) error { return p.writeKubeconfig(path) }
