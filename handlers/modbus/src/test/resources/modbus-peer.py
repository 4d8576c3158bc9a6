#!/usr/bin/env python3
"""A Modbus TCP server (Debian's python3-pymodbus, 3.0.x) with a device identity, for tests.

Usage: modbus-peer.py HOST PORT VENDOR PRODUCT_CODE REVISION [PRODUCT_NAME]
Prints "LISTENING <port>" once the socket is bound (PORT 0 picks a free one) and serves until
killed or until its standard input closes (so a test that dies takes its peer with it).
"""
import asyncio
import socket
import sys

from pymodbus.datastore import ModbusServerContext, ModbusSlaveContext
from pymodbus.device import ModbusDeviceIdentification
from pymodbus.server.async_io import ModbusTcpServer


async def main():
    host, port = sys.argv[1], int(sys.argv[2])
    info = {0x00: sys.argv[3], 0x01: sys.argv[4], 0x02: sys.argv[5]}
    if len(sys.argv) > 6:
        info[0x04] = sys.argv[6]
    identity = ModbusDeviceIdentification(info=info)
    # single=True: every unit id answers with the same device.
    context = ModbusServerContext(slaves=ModbusSlaveContext(), single=True)
    if port == 0:
        probe = socket.socket()
        probe.bind((host, 0))
        port = probe.getsockname()[1]
        probe.close()
    server = ModbusTcpServer(
        context, identity=identity, address=(host, port), allow_reuse_address=True,
        defer_start=True)
    serving = asyncio.ensure_future(server.serve_forever())
    while server.server is None:
        await asyncio.sleep(0.01)
    print("LISTENING %d" % port, flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    await asyncio.wait([serving, stdin_closed], return_when=asyncio.FIRST_COMPLETED)


if __name__ == "__main__":
    asyncio.run(main())
