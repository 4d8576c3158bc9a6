package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/** Reading Akri's two values from GetNetworkInterfaces answers (the shapes of Akri's tests). */
class SoapDeviceServiceTest {

  private static Document doc(String body) throws Xml.Rejected {
    String xml =
        "<SOAP-ENV:Envelope xmlns:SOAP-ENV=\"http://www.w3.org/2003/05/soap-envelope\""
            + " xmlns:tds=\"http://www.onvif.org/ver10/device/wsdl\""
            + " xmlns:tt=\"http://www.onvif.org/ver10/schema\"><SOAP-ENV:Header/><SOAP-ENV:Body>"
            + body
            + "</SOAP-ENV:Body></SOAP-ENV:Envelope>";
    byte[] b = xml.getBytes(StandardCharsets.UTF_8);
    return Xml.parse(b, b.length, 1 << 20);
  }

  @Test
  void manualAddress() throws Exception {
    Document d =
        doc(
            "<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces token=\"eth0\"><tt:Enabled>true"
                + "</tt:Enabled><tt:Info><tt:Name>eth0</tt:Name><tt:HwAddress>00:12:41:5c:a1:a5"
                + "</tt:HwAddress><tt:MTU>1500</tt:MTU></tt:Info><tt:IPv4><tt:Enabled>true</tt:Enabled>"
                + "<tt:Config><tt:Manual><tt:Address>192.168.1.36</tt:Address><tt:PrefixLength>24"
                + "</tt:PrefixLength></tt:Manual><tt:DHCP>false</tt:DHCP></tt:Config></tt:IPv4>"
                + "</tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>");
    assertThat(SoapDeviceService.ipAndMac(d))
        .isEqualTo(new DeviceService.IpAndMac("192.168.1.36", "00:12:41:5c:a1:a5"));
  }

  @Test
  void linkLocalThenDhcpTakesTheFirstInDocumentOrder() throws Exception {
    Document d =
        doc(
            "<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces token=\"eth0\"><tt:Info>"
                + "<tt:HwAddress>00:FC:DA:B1:69:CC</tt:HwAddress></tt:Info><tt:IPv4><tt:Config>"
                + "<tt:LinkLocal><tt:Address>10.137.185.208</tt:Address></tt:LinkLocal><tt:FromDHCP>"
                + "<tt:Address>10.137.185.209</tt:Address></tt:FromDHCP></tt:Config></tt:IPv4>"
                + "</tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>");
    assertThat(SoapDeviceService.ipAndMac(d))
        .isEqualTo(new DeviceService.IpAndMac("10.137.185.208", "00:FC:DA:B1:69:CC"));
  }

  @Test
  void missingOrInsaneValuesFail() throws Exception {
    assertThatThrownBy(() -> SoapDeviceService.ipAndMac(doc("<x/>")))
        .hasMessage("no GetNetworkInterfacesResponse in the answer");
    assertThatThrownBy(
            () ->
                SoapDeviceService.ipAndMac(
                    doc(
                        "<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces><tt:Info>"
                            + "<tt:HwAddress>00:12:41:5c:a1:a5</tt:HwAddress></tt:Info>"
                            + "</tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>")))
        .hasMessage("no IPv4 address in the network interfaces");
    assertThatThrownBy(
            () ->
                SoapDeviceService.ipAndMac(
                    doc(
                        "<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces><tt:Info>"
                            + "<tt:HwAddress>00:12:41:5c:a1:a5</tt:HwAddress></tt:Info><tt:IPv4>"
                            + "<tt:Config><tt:Manual><tt:Address>PATH=/x\nLD_PRELOAD=y</tt:Address>"
                            + "</tt:Manual></tt:Config></tt:IPv4></tds:NetworkInterfaces>"
                            + "</tds:GetNetworkInterfacesResponse>")))
        .hasMessageStartingWith("the IPv4 address is not an IP address: PATH=/x?LD_PRELOAD=y");
  }
}
