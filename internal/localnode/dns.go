package localnode

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"

	"golang.org/x/net/dns/dnsmessage"
)

// clusterDomain is the suffix of every name the DNS server answers.
const clusterDomain = "cluster.local."

// dnsTTL is the TTL of every answer: short, because tests create and
// delete Services all the time.
const dnsTTL = 5

// dnsServer answers A queries for Services the way cluster DNS does:
// <service>.<namespace>.svc.cluster.local is the ClusterIP, or for a
// headless Service its ready endpoints' addresses, and
// <hostname>.<service>.<namespace>.svc.cluster.local one endpoint (a
// StatefulSet's pod). Other names in cluster.local are NXDOMAIN; names
// outside it are refused (the machine is offline). It listens on UDP and
// TCP port 53 of the node's address.
type dnsServer struct {
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	udp      net.PacketConn
	tcp      net.Listener
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func (n *Node) startDNS(ctx context.Context) error {
	kube, err := kubernetes.NewForConfig(n.cp.Config)
	if err != nil {
		return err
	}
	s, err := startDNS(ctx, kube, net.JoinHostPort(n.IP, "53"))
	if err != nil {
		return err
	}
	n.dns = s
	return nil
}

func startDNS(ctx context.Context, kube kubernetes.Interface, addr string) (*dnsServer, error) {
	runCtx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(kube, 0)
	s := &dnsServer{
		services: f.Core().V1().Services().Lister(),
		slices:   f.Discovery().V1().EndpointSlices().Lister(),
		cancel:   cancel,
	}
	f.Start(runCtx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("localnode: dns: %v informer did not sync", typ)
		}
	}
	var err error
	if s.udp, err = net.ListenPacket("udp4", addr); err != nil {
		cancel()
		return nil, fmt.Errorf("localnode: dns: %w", err)
	}
	if s.tcp, err = net.Listen("tcp4", addr); err != nil {
		s.udp.Close()
		cancel()
		return nil, fmt.Errorf("localnode: dns: %w", err)
	}
	s.wg.Add(2)
	go s.serveUDP()
	go s.serveTCP()
	return s, nil
}

func (s *dnsServer) stop() {
	s.cancel()
	s.udp.Close()
	s.tcp.Close()
	s.wg.Wait()
}

func (s *dnsServer) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			_, _ = s.udp.WriteTo(resp, from)
		}
	}
}

func (s *dnsServer) serveTCP() {
	defer s.wg.Done()
	for {
		conn, err := s.tcp.Accept()
		if err != nil {
			return
		}
		go s.serveConn(conn)
	}
}

// serveConn answers length-prefixed queries on one TCP connection.
func (s *dnsServer) serveConn(conn net.Conn) {
	defer conn.Close()
	for {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		var size [2]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, msg); err != nil {
			return
		}
		resp := s.answer(msg)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := conn.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// answer builds the response to one query message, or nil for a message
// that is not a query.
func (s *dnsServer) answer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	resp := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	ips, rcode := s.lookup(q)
	resp.RCode = rcode
	b := dnsmessage.NewBuilder(nil, resp)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	for _, ip := range ips {
		_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}, dnsmessage.AResource{A: ip.As4()})
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// lookup resolves a question: the A records of a Service name (none for
// other types of an existing name), NXDOMAIN for other names in the
// cluster domain, REFUSED outside it.
func (s *dnsServer) lookup(q dnsmessage.Question) ([]netip.Addr, dnsmessage.RCode) {
	name := strings.ToLower(q.Name.String())
	if !strings.HasSuffix(name, "."+clusterDomain) {
		return nil, dnsmessage.RCodeRefused
	}
	ips, err := s.resolve(strings.TrimSuffix(name, "."+clusterDomain))
	if err != nil {
		return nil, dnsmessage.RCodeNameError
	}
	if q.Type != dnsmessage.TypeA {
		return nil, dnsmessage.RCodeSuccess
	}
	return ips, dnsmessage.RCodeSuccess
}

var errNoName = errors.New("no such name")

// resolve maps "<svc>.<ns>.svc" and "<host>.<svc>.<ns>.svc" to addresses.
func (s *dnsServer) resolve(rel string) ([]netip.Addr, error) {
	parts := strings.Split(rel, ".")
	if len(parts) < 3 || len(parts) > 4 || parts[len(parts)-1] != "svc" {
		return nil, errNoName
	}
	host, svcName, ns := "", parts[len(parts)-3], parts[len(parts)-2]
	if len(parts) == 4 {
		host = parts[0]
	}
	svc, err := s.services.Services(ns).Get(svcName)
	if err != nil {
		return nil, errNoName
	}
	if host == "" && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != "None" {
		ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil {
			return nil, errNoName
		}
		return []netip.Addr{ip}, nil
	}
	ips := s.endpoints(ns, svcName, host)
	if host != "" && len(ips) == 0 {
		return nil, errNoName
	}
	return ips, nil
}

// endpoints are the ready IPv4 addresses of a Service's EndpointSlices
// (only the one whose hostname is host, when host is set).
func (s *dnsServer) endpoints(ns, svc, host string) []netip.Addr {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc})
	slices, _ := s.slices.EndpointSlices(ns).List(sel)
	var out []netip.Addr
	for _, sl := range slices {
		if sl.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range sl.Endpoints {
			if host != "" && (ep.Hostname == nil || *ep.Hostname != host) {
				continue
			}
			if host == "" && ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil {
					out = append(out, ip)
				}
			}
		}
	}
	return out
}
