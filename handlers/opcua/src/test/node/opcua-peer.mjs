// One real OPC UA peer (node-opcua) for the opcua handler's integration tests and bench.
//
//   node opcua-peer.mjs lds    --port P --pki DIR
//   node opcua-peer.mjs server --port P --pki DIR --name NAME [--hostname H] [--lds URL]
//   node opcua-peer.mjs flood  --port P --pki DIR --count N
//
// lds:    a local discovery server (OPCUADiscoveryServer). mDNS is switched off: the peers only
//         ever talk on the loopback interface (servers register with RegisterServer2 over TCP).
// server: an OPCUAServer named NAME; --hostname fixes the host name in its endpoint and discovery
//         URLs (an unresolvable one is allowed), --lds registers it with that discovery server.
// flood:  an OPCUAServer whose FindServers answers N made-up applications with hostile names
//         (control characters, long, empty) and odd discovery URLs, as a broken device might.
//
// Prints one line "READY {json}" on stdout once it answers, then runs until stdin closes or it
// gets SIGTERM/SIGINT; it then shuts down (unregistering from the LDS) and exits 0.
import { OPCUACertificateManager } from "node-opcua-certificate-manager";
import {
  OPCUAServer,
  OPCUABaseServer,
  RegisterServerMethod
} from "node-opcua-server";
import { OPCUADiscoveryServer } from "node-opcua-server-discovery";
import { BonjourHolder, FindServersResponse } from "node-opcua-service-discovery";
import { ApplicationDescription, ApplicationType } from "node-opcua-service-endpoints";
import fs from "node:fs";
import path from "node:path";

function args(argv) {
  const out = { role: argv[0] };
  for (let i = 1; i < argv.length; i += 2) {
    out[argv[i].replace(/^--/, "")] = argv[i + 1];
  }
  return out;
}

const opts = args(process.argv.slice(2));
const port = parseInt(opts.port, 10);
const pki = opts.pki;
if (!opts.role || !port || !pki) {
  console.error("usage: opcua-peer.mjs lds|server|flood --port P --pki DIR [...]");
  process.exit(2);
}
fs.mkdirSync(pki, { recursive: true });

// No multicast DNS from the tests: announcing registered servers is a no-op.
BonjourHolder.prototype.announcedOnMulticastSubnet = async function () {
  return false;
};
BonjourHolder.prototype.stopAnnouncedOnMulticastSubnet = async function () {};

async function certificateManager(name) {
  const cm = new OPCUACertificateManager({
    rootFolder: path.join(pki, name),
    automaticallyAcceptUnknownCertificate: true
  });
  await cm.initialize();
  return cm;
}

/** The LDS without its mDNS responder and announcer (see OPCUADiscoveryServer.start). */
class LoopbackDiscoveryServer extends OPCUADiscoveryServer {
  async start() {
    this._preInitTask.push(async () => {
      await this._delayInit?.();
    });
    await new Promise((resolve, reject) =>
      OPCUABaseServer.prototype.start.call(this, (err) => (err ? reject(err) : resolve()))
    );
  }
}

/** A server whose FindServers answer is made up: many applications, hostile names. */
class FloodServer extends OPCUAServer {
  _on_FindServersRequest(message, channel) {
    const count = parseInt(opts.count || "10000", 10);
    const names = ["", "\u0000\u0007bell", "x".repeat(100), "zero\u200bwidth", "new\nline"];
    const servers = [];
    for (let i = 0; i < count; i++) {
      let urls = [`opc.tcp://127.0.0.1:${20000 + (i % 40000)}/flood/${i}`];
      if (i % 11 === 10) urls = ["http://flood.invalid/", "not a url"];
      else if (i % 13 === 12) urls = ["opc.tcp://bad host\u0007/"];
      else if (i % 17 === 16) urls = ["opc.tcp://127.0.0.1:99999/"];
      else if (i % 19 === 18) urls = ["opc.tcp://127.0.0.1:4840/" + "y".repeat(2000)];
      servers.push(
        new ApplicationDescription({
          applicationUri: `urn:flood:${i}`,
          applicationName: { text: names[i % names.length] + i },
          applicationType: i % 7 === 6 ? ApplicationType.Client : ApplicationType.Server,
          discoveryUrls: urls
        })
      );
    }
    channel.send_response("MSG", new FindServersResponse({ servers }), message, () => {});
  }
}

let peer;
if (opts.role === "lds") {
  peer = new LoopbackDiscoveryServer({
    port,
    hostname: "127.0.0.1",
    serverCertificateManager: await certificateManager("lds"),
    serverInfo: {
      applicationUri: `urn:jakri:test:lds:${port}`,
      applicationName: { text: "jakri test LDS" }
    }
  });
} else if (opts.role === "server" || opts.role === "flood") {
  const name = opts.name || `flood-${port}`;
  const Kind = opts.role === "flood" ? FloodServer : OPCUAServer;
  peer = new Kind({
    port,
    hostname: opts.hostname || "127.0.0.1",
    serverCertificateManager: await certificateManager("server"),
    userCertificateManager: await certificateManager("user"),
    serverInfo: {
      applicationUri: `urn:jakri:test:${port}`,
      productUri: "urn:jakri:test",
      applicationName: { text: name }
    },
    registerServerMethod: opts.lds ? RegisterServerMethod.LDS : RegisterServerMethod.HIDDEN,
    discoveryServerEndpointUrl: opts.lds
  });
} else {
  console.error(`unknown role ${opts.role}`);
  process.exit(2);
}

await peer.start();

async function registeredWithLds() {
  // RegisterServer goes out after start(): READY only once the LDS has accepted it.
  if (!opts.lds) return;
  const manager = peer.registerServerManager;
  // RegisterServerManagerStatus: REGISTERED = 5, WAITING = 6 (not exported by node-opcua-server).
  if ([5, 6].includes(manager.getState())) return;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("not registered with " + opts.lds + " in 30 s")), 30000);
    manager.once("serverRegistered", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
await registeredWithLds();

console.log(
  "READY " +
    JSON.stringify({
      role: opts.role,
      port,
      endpointUrl: peer.getEndpointUrl(),
      discoveryUrls: peer.getDiscoveryUrls()
    })
);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  try {
    await peer.shutdown(0);
  } catch (e) {
    console.error("shutdown: " + e);
  }
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
