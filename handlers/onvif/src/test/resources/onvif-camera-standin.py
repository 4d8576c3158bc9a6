#!/usr/bin/env python3
"""An ONVIF camera stand-in for the onvif handler's tests (standard library only).

It answers WS-Discovery probes (UDP multicast 239.255.255.250:3702) with a ProbeMatch and serves
the ONVIF device service over SOAP 1.2/HTTP: GetSystemDateAndTime (never authenticated),
GetServices, GetCapabilities, GetDeviceInformation, GetNetworkInterfaces, GetHostname,
GetNetworkDefaultGateway, GetDNS, GetNTP, GetScopes. With --username/--password every call but
GetSystemDateAndTime needs a WS-Security UsernameToken whose PasswordDigest checks out
(Base64(SHA-1(nonce + created + password))); otherwise a ter:NotAuthorized fault, HTTP 400.

Hostile modes make it misbehave on purpose (--probe-mode for the UDP answers, --soap-mode for
GetNetworkInterfaces). Two independent ONVIF clients (onvif-util, npm onvif) check that its normal
answers are what real clients accept.

Prints "READY <http-port>" on stdout once both sockets are listening; logs requests to stderr.
"""
import argparse
import base64
import datetime
import hashlib
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time
import uuid as uuidlib
import xml.etree.ElementTree as ET

SOAP = "http://www.w3.org/2003/05/soap-envelope"
WSA = "http://schemas.xmlsoap.org/ws/2004/08/addressing"
WSD = "http://schemas.xmlsoap.org/ws/2005/04/discovery"
WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
TDS = "http://www.onvif.org/ver10/device/wsdl"
TT = "http://www.onvif.org/ver10/schema"
TER = "http://www.onvif.org/ver10/error"
NS_DECL = (f'xmlns:s="{SOAP}" xmlns:a="{WSA}" xmlns:d="{WSD}" xmlns:tds="{TDS}" '
           f'xmlns:tt="{TT}" xmlns:ter="{TER}" xmlns:dn="http://www.onvif.org/ver10/network/wsdl"')

args = None
log_lock = threading.Lock()


def log(*parts):
    with log_lock:
        print(*parts, file=sys.stderr, flush=True)


def envelope(body, header=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?><s:Envelope {NS_DECL}>'
            f'<s:Header>{header}</s:Header><s:Body>{body}</s:Body></s:Envelope>')


def service_url():
    return f"http://{args.bind_ip}:{args.http_port}/onvif/device_service"


def probe_match(relates_to, endpoint_uuid, xaddrs, scopes):
    header = (f'<a:MessageID>uuid:{uuidlib.uuid4()}</a:MessageID><a:RelatesTo>{relates_to}</a:RelatesTo>'
              f'<a:To>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous</a:To>'
              f'<a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</a:Action>')
    body = (f'<d:ProbeMatches><d:ProbeMatch><a:EndpointReference><a:Address>urn:uuid:{endpoint_uuid}'
            f'</a:Address></a:EndpointReference><d:Types>dn:NetworkVideoTransmitter tds:Device</d:Types>'
            f'<d:Scopes>{scopes}</d:Scopes><d:XAddrs>{xaddrs}</d:XAddrs>'
            f'<d:MetadataVersion>1</d:MetadataVersion></d:ProbeMatch></d:ProbeMatches>')
    return envelope(body, header).encode()


def hostile_probe_answers(relates_to):
    """Extra answers sent before the real one, per --probe-mode."""
    mode = args.probe_mode
    dead = f"http://{args.bind_ip}:9/onvif/device_service"
    if mode == "xxe":
        yield (f'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
               f'<s:Envelope {NS_DECL}><s:Body><d:ProbeMatches><d:ProbeMatch><a:EndpointReference>'
               f'<a:Address>urn:uuid:xxe-&x;</a:Address></a:EndpointReference>'
               f'<d:XAddrs>{dead}</d:XAddrs></d:ProbeMatch></d:ProbeMatches></s:Body></s:Envelope>').encode()
        yield (f'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
               + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8))
               + f']><s:Envelope {NS_DECL}><s:Body>&i;</s:Body></s:Envelope>').encode()
    elif mode == "huge":
        # One datagram near the UDP maximum: many matches with long scope lists, plus garbage.
        matches = "".join(
            f'<d:ProbeMatch><a:EndpointReference><a:Address>urn:uuid:{uuidlib.uuid4()}</a:Address>'
            f'</a:EndpointReference><d:Scopes>{"onvif://www.onvif.org/x " * 20}</d:Scopes>'
            f'<d:XAddrs>{dead}</d:XAddrs></d:ProbeMatch>' for _ in range(60))
        data = envelope(f"<d:ProbeMatches>{matches}</d:ProbeMatches>",
                        f"<a:RelatesTo>{relates_to}</a:RelatesTo>").encode()
        yield data[:65000]
        yield b"\x00\xff" * 30000
        yield b"<" * 60000
        deep = "<d:X>" * 5000 + "</d:X>" * 5000
        yield envelope(deep, f"<a:RelatesTo>{relates_to}</a:RelatesTo>").encode()
    elif mode == "flood":
        for i in range(args.flood):
            yield probe_match(relates_to, uuidlib.uuid4(), f"http://{args.bind_ip}:9/flood/{i}",
                              "onvif://www.onvif.org/name/Flood")
    elif mode == "spoof":
        # Someone else's UUID with an address that does not answer, and an answer to another probe.
        yield probe_match(relates_to, args.uuid, dead, args.scopes)
        yield probe_match("uuid:someone-elses-probe", uuidlib.uuid4(),
                          f"http://{args.bind_ip}:{args.http_port}/other", args.scopes)


hostile_sock = None


def discovery_loop(sock):
    while True:
        data, sender = sock.recvfrom(65535)
        try:
            root = ET.fromstring(data)
        except ET.ParseError:
            continue
        if root.find(f"{{{SOAP}}}Body/{{{WSD}}}Probe") is None:
            continue
        message_id = root.findtext(f"{{{SOAP}}}Header/{{{WSA}}}MessageID", "")
        types = root.findtext(f"{{{SOAP}}}Body/{{{WSD}}}Probe/{{{WSD}}}Types", "") or ""
        wanted = [t.split(":")[-1] for t in types.split()]
        if wanted and not any(t in ("NetworkVideoTransmitter", "Device") for t in wanted):
            log("probe for", types, "not answered")
            continue
        log("probe from", sender, "types", types)
        if args.probe_mode != "silent":
            # The genuine answer first: a burst that overflows the receiver's socket buffer hides
            # whatever comes after it, which no UDP receiver can prevent; what the tests check is
            # that the handler's own bounds never crowd a camera out.
            sock.sendto(probe_match(message_id, args.uuid, service_url(), args.scopes), sender)
            for extra in hostile_probe_answers(message_id):
                try:
                    hostile_sock.sendto(extra, sender)
                except OSError as e:
                    log("hostile answer not sent:", e)


def check_token(root):
    if not args.username:
        return True
    token = root.find(f"{{{SOAP}}}Header/{{{WSSE}}}Security/{{{WSSE}}}UsernameToken")
    if token is None:
        return False
    user = token.findtext(f"{{{WSSE}}}Username", "")
    digest = token.findtext(f"{{{WSSE}}}Password", "")
    nonce = token.findtext(f"{{{WSSE}}}Nonce", "")
    created = token.findtext(f"{{{WSU}}}Created", "")
    try:
        raw_nonce = base64.b64decode(nonce)
    except Exception:
        return False
    expected = base64.b64encode(
        hashlib.sha1(raw_nonce + created.encode() + args.password.encode()).digest()).decode()
    ok = user == args.username and digest == expected
    log("UsernameToken for", user, "digest", "ok" if ok else "WRONG")
    return ok


def answer(action):
    now = datetime.datetime.now(datetime.timezone.utc)
    if action == "GetSystemDateAndTime":
        return (f'<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>NTP'
                f'</tt:DateTimeType><tt:DaylightSavings>false</tt:DaylightSavings><tt:TimeZone><tt:TZ>UTC0'
                f'</tt:TZ></tt:TimeZone><tt:UTCDateTime><tt:Time><tt:Hour>{now.hour}</tt:Hour><tt:Minute>'
                f'{now.minute}</tt:Minute><tt:Second>{now.second}</tt:Second></tt:Time><tt:Date><tt:Year>'
                f'{now.year}</tt:Year><tt:Month>{now.month}</tt:Month><tt:Day>{now.day}</tt:Day></tt:Date>'
                f'</tt:UTCDateTime></tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>')
    if action == "GetServices":
        return (f'<tds:GetServicesResponse><tds:Service><tds:Namespace>{TDS}</tds:Namespace>'
                f'<tds:XAddr>{service_url()}</tds:XAddr><tds:Version><tt:Major>2</tt:Major><tt:Minor>60'
                f'</tt:Minor></tds:Version></tds:Service></tds:GetServicesResponse>')
    if action == "GetCapabilities":
        return (f'<tds:GetCapabilitiesResponse><tds:Capabilities><tt:Device><tt:XAddr>{service_url()}'
                f'</tt:XAddr><tt:Network><tt:IPFilter>false</tt:IPFilter><tt:ZeroConfiguration>false'
                f'</tt:ZeroConfiguration><tt:IPVersion6>false</tt:IPVersion6><tt:DynDNS>false</tt:DynDNS>'
                f'</tt:Network><tt:System><tt:DiscoveryResolve>false</tt:DiscoveryResolve>'
                f'<tt:DiscoveryBye>false</tt:DiscoveryBye><tt:RemoteDiscovery>false</tt:RemoteDiscovery>'
                f'<tt:SystemBackup>false</tt:SystemBackup><tt:SystemLogging>false</tt:SystemLogging>'
                f'<tt:FirmwareUpgrade>false</tt:FirmwareUpgrade><tt:SupportedVersions><tt:Major>2'
                f'</tt:Major><tt:Minor>60</tt:Minor></tt:SupportedVersions></tt:System></tt:Device>'
                f'<tt:Media><tt:XAddr>{service_url()}</tt:XAddr><tt:StreamingCapabilities>'
                f'<tt:RTPMulticast>false</tt:RTPMulticast><tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true'
                f'</tt:RTP_RTSP_TCP></tt:StreamingCapabilities></tt:Media>'
                f'</tds:Capabilities></tds:GetCapabilitiesResponse>')
    if action == "GetDeviceInformation":
        return ('<tds:GetDeviceInformationResponse><tds:Manufacturer>jakri</tds:Manufacturer>'
                '<tds:Model>StandIn</tds:Model><tds:FirmwareVersion>1.0</tds:FirmwareVersion>'
                f'<tds:SerialNumber>{args.uuid[:8]}</tds:SerialNumber><tds:HardwareId>1</tds:HardwareId>'
                '</tds:GetDeviceInformationResponse>')
    if action == "GetNetworkInterfaces":
        return (f'<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces token="eth0"><tt:Enabled>true'
                f'</tt:Enabled><tt:Info><tt:Name>eth0</tt:Name><tt:HwAddress>{args.mac}</tt:HwAddress>'
                f'<tt:MTU>1500</tt:MTU></tt:Info><tt:IPv4><tt:Enabled>true</tt:Enabled><tt:Config>'
                f'<tt:Manual><tt:Address>{args.ip}</tt:Address><tt:PrefixLength>24</tt:PrefixLength>'
                f'</tt:Manual><tt:DHCP>false</tt:DHCP></tt:Config></tt:IPv4></tds:NetworkInterfaces>'
                f'</tds:GetNetworkInterfacesResponse>')
    if action == "GetHostname":
        return ('<tds:GetHostnameResponse><tds:HostnameInformation><tt:FromDHCP>false</tt:FromDHCP>'
                '<tt:Name>standin</tt:Name></tds:HostnameInformation></tds:GetHostnameResponse>')
    if action == "GetNetworkDefaultGateway":
        return ('<tds:GetNetworkDefaultGatewayResponse><tds:NetworkGateway><tt:IPv4Address>'
                f'{args.gateway}</tt:IPv4Address></tds:NetworkGateway></tds:GetNetworkDefaultGatewayResponse>')
    if action == "GetDNS":
        return ('<tds:GetDNSResponse><tds:DNSInformation><tt:FromDHCP>false</tt:FromDHCP><tt:DNSManual>'
                f'<tt:Type>IPv4</tt:Type><tt:IPv4Address>{args.gateway}</tt:IPv4Address></tt:DNSManual>'
                '</tds:DNSInformation></tds:GetDNSResponse>')
    if action == "GetNTP":
        return ('<tds:GetNTPResponse><tds:NTPInformation><tt:FromDHCP>false</tt:FromDHCP>'
                '</tds:NTPInformation></tds:GetNTPResponse>')
    if action == "GetProfiles":
        return ('<trt:GetProfilesResponse xmlns:trt="http://www.onvif.org/ver10/media/wsdl">'
                '<trt:Profiles token="profile_1" fixed="true"><tt:Name>main</tt:Name></trt:Profiles>'
                '</trt:GetProfilesResponse>')
    if action == "GetProfile":
        return ('<trt:GetProfileResponse xmlns:trt="http://www.onvif.org/ver10/media/wsdl">'
                '<trt:Profile token="profile_1" fixed="true"><tt:Name>main</tt:Name></trt:Profile>'
                '</trt:GetProfileResponse>')
    if action == "GetScopes":
        scopes = "".join(f'<tds:Scopes><tt:ScopeDef>Fixed</tt:ScopeDef><tt:ScopeItem>{s}</tt:ScopeItem>'
                         f'</tds:Scopes>' for s in args.scopes.split())
        return f'<tds:GetScopesResponse>{scopes}</tds:GetScopesResponse>'
    return None


def fault(code, subcode, reason):
    return envelope(f'<s:Fault><s:Code><s:Value>s:{code}</s:Value><s:Subcode><s:Value>{subcode}'
                    f'</s:Value></s:Subcode></s:Code><s:Reason><s:Text xml:lang="en">{reason}</s:Text>'
                    f'</s:Reason></s:Fault>')


def hostile_soap_body():
    mode = args.soap_mode
    if mode == "xxe":
        return (f'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                f'<s:Envelope {NS_DECL}><s:Body><tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces>'
                f'<tt:Info><tt:HwAddress>&x;</tt:HwAddress></tt:Info><tt:IPv4><tt:Config><tt:Manual>'
                f'<tt:Address>&x;</tt:Address></tt:Manual></tt:Config></tt:IPv4></tds:NetworkInterfaces>'
                f'</tds:GetNetworkInterfacesResponse></s:Body></s:Envelope>').encode()
    if mode == "entities":
        ents = '<!ENTITY a "aaaaaaaaaa">' + "".join(
            f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(9))
        return (f'<?xml version="1.0"?><!DOCTYPE l [{ents}]><s:Envelope {NS_DECL}><s:Body>'
                f'<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces><tt:Info><tt:HwAddress>&j;'
                f'</tt:HwAddress></tt:Info></tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>'
                f'</s:Body></s:Envelope>').encode()
    if mode == "big":
        filler = b"<tt:Extension>" + b"x" * (10 * 1024 * 1024) + b"</tt:Extension>"
        return envelope(answer("GetNetworkInterfaces")).encode().replace(b"<tt:MTU>", filler + b"<tt:MTU>")
    if mode == "deep":
        deep = "<tt:Extension>" * 100000 + "</tt:Extension>" * 100000
        return envelope(answer("GetNetworkInterfaces").replace("<tt:MTU>", deep + "<tt:MTU>")).encode()
    if mode == "garbage":
        return b"\x00\x01<<<not xml" * 100
    if mode == "bad-values":
        return envelope(answer("GetNetworkInterfaces")
                        .replace(f">{args.ip}<", ">PATH=/evil; rm -rf /<")
                        .replace(f">{args.mac}<", ">" + "z" * 5000 + "<")).encode()
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        log("http", self.address_string(), fmt % a)

    def send(self, status, body, content_type="application/soap+xml; charset=utf-8"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            log("client went away while the answer was written")

    def do_GET(self):
        self.send(405, b"", "text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(length)
        try:
            root = ET.fromstring(data)
            body = root.find(f"{{{SOAP}}}Body")
            action = next(iter(body)).tag.split("}")[-1]
        except Exception:
            self.send(400, fault("Sender", "ter:WellFormed", "not a SOAP envelope").encode())
            return
        log("action", action)
        if action == "GetSystemDateAndTime" and args.unresponsive == "500":
            self.send(500, b"internal error", "text/plain")
            return
        if action == "GetSystemDateAndTime" and args.unresponsive == "hang":
            time.sleep(5)
        if action != "GetSystemDateAndTime" and not check_token(root):
            self.send(400, fault("Sender", "ter:NotAuthorized", "Sender not Authorized").encode())
            return
        if action == "GetNetworkInterfaces" and args.soap_mode != "normal":
            self.send(200, hostile_soap_body())
            return
        result = answer(action)
        if result is None:
            self.send(400, fault("Sender", "ter:ActionNotSupported", f"{action} not supported").encode())
            return
        self.send(200, envelope(result).encode())


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--bind-ip", required=True)
    p.add_argument("--http-port", type=int, default=0)
    p.add_argument("--uuid", default=str(uuidlib.uuid4()))
    p.add_argument("--scopes", default="onvif://www.onvif.org/type/video_encoder onvif://www.onvif.org/name/StandIn")
    p.add_argument("--ip", default=None)
    p.add_argument("--mac", default="02:00:5e:00:53:01")
    p.add_argument("--gateway", default="10.0.0.1")
    p.add_argument("--username", default=None)
    p.add_argument("--password", default="")
    p.add_argument("--unresponsive", choices=["no", "500", "hang"], default="no")
    p.add_argument("--probe-mode", choices=["normal", "silent", "xxe", "huge", "flood", "spoof"],
                   default="normal")
    p.add_argument("--flood", type=int, default=2000)
    p.add_argument("--hostile-from", default=None, help="source address of the hostile answers")
    p.add_argument("--soap-mode", choices=["normal", "xxe", "entities", "big", "deep", "garbage",
                                           "bad-values"], default="normal")
    args = p.parse_args()
    if args.ip is None:
        args.ip = args.bind_ip

    server = Server((args.bind_ip, args.http_port), Handler)
    args.http_port = server.server_address[1]

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("", 3702))
    mreq = struct.pack("4s4s", socket.inet_aton("239.255.255.250"), socket.inet_aton(args.bind_ip))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)

    global hostile_sock
    hostile_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    hostile_sock.bind((args.hostile_from or args.bind_ip, 0))
    hostile_sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
    threading.Thread(target=discovery_loop, args=(sock,), daemon=True).start()
    print(f"READY {args.http_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
