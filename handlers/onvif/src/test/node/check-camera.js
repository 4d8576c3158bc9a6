// An independent ONVIF client (npm "onvif") reading a camera: prints one JSON line with what it
// got, or {"error": ...}. Usage: node check-camera.js <host> <port> [username password]
'use strict';
const { Cam } = require('onvif');

const [host, port, username, password] = process.argv.slice(2);
const cam = new Cam({
  hostname: host,
  port: Number(port),
  path: '/onvif/device_service',
  username,
  password,
  timeout: 5000,
  autoconnect: false,
});

function done(result) {
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
}

cam.connect((err) => {
  if (err) {
    return done({ error: 'connect: ' + (err.message || String(err)) });
  }
  cam.getSystemDateAndTime((err, date) => {
    if (err) {
      return done({ error: 'date: ' + err.message });
    }
    cam.getNetworkInterfaces((err, interfaces) => {
      if (err) {
        return done({ error: 'interfaces: ' + err.message, date: date.toISOString() });
      }
      const nif = Array.isArray(interfaces) ? interfaces[0] : interfaces;
      const manual = nif.IPv4 && nif.IPv4.config && nif.IPv4.config.manual;
      cam.getDeviceInformation((err, info) => {
        done({
          date: date.toISOString(),
          mac: nif.info && nif.info.hwAddress,
          ip: manual && (Array.isArray(manual) ? manual[0].address : manual.address),
          manufacturer: info && info.manufacturer,
          deviceError: err ? err.message : undefined,
        });
      });
    });
  });
});
