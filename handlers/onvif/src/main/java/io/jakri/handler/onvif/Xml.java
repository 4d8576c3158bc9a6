package io.jakri.handler.onvif;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.ErrorHandler;
import org.xml.sax.InputSource;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

/**
 * XML from the network (ProbeMatches, SOAP responses) read with the JDK's own parser, hardened: a
 * camera is untrusted input.
 *
 * <ul>
 *   <li>any {@code <!DOCTYPE>} is refused, so there are no DTDs, no entity declarations (no XXE, no
 *       "billion laughs") and nothing is fetched;
 *   <li>external entities, external DTDs and XInclude are off as well, and secure processing on;
 *   <li>input is bounded by the caller's byte limit before parsing, and element nesting by {@value
 *       #MAX_DEPTH} levels (the JDK's {@code maxElementDepth} limit).
 * </ul>
 *
 * {@link DocumentBuilderFactory#newDefaultInstance()} is used so that no other JAXP implementation
 * on a class path can replace the JDK's. Thread-safe: a new builder per parse.
 */
final class Xml {

  /** Deepest element nesting accepted; SOAP messages nest about ten levels. */
  static final int MAX_DEPTH = 64;

  private static final DocumentBuilderFactory FACTORY = factory();

  private Xml() {}

  /** Why a document was not accepted. */
  static final class Rejected extends Exception {
    private static final long serialVersionUID = 1L;

    Rejected(String message) {
      super(message);
    }
  }

  private static DocumentBuilderFactory factory() {
    DocumentBuilderFactory f = DocumentBuilderFactory.newDefaultInstance();
    try {
      f.setNamespaceAware(true);
      f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
      f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      f.setFeature("http://xml.org/sax/features/external-general-entities", false);
      f.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
      f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
      f.setAttribute(XMLConstants.ACCESS_EXTERNAL_DTD, "");
      f.setAttribute(XMLConstants.ACCESS_EXTERNAL_SCHEMA, "");
      f.setAttribute("http://www.oracle.com/xml/jaxp/properties/maxElementDepth", MAX_DEPTH);
      f.setXIncludeAware(false);
      f.setExpandEntityReferences(false);
      f.setValidating(false);
    } catch (ParserConfigurationException | IllegalArgumentException e) {
      throw new IllegalStateException("the JDK's XML parser lacks a hardening feature", e);
    }
    return f;
  }

  /**
   * Parses a document of at most {@code maxBytes} bytes.
   *
   * @throws Rejected for oversized, malformed or forbidden input; the message is one short line
   */
  static Document parse(byte[] bytes, int length, int maxBytes) throws Rejected {
    if (length > maxBytes) {
      throw new Rejected("document of " + length + " bytes is larger than " + maxBytes);
    }
    try {
      DocumentBuilder builder = FACTORY.newDocumentBuilder();
      builder.setErrorHandler(SILENT);
      builder.setEntityResolver(
          (publicId, systemId) -> {
            throw new SAXException("external entity " + systemId + " refused");
          });
      return builder.parse(new InputSource(new ByteArrayInputStream(bytes, 0, length)));
    } catch (SAXException e) {
      throw new Rejected("malformed or forbidden XML: " + firstLine(e.getMessage()));
    } catch (IOException | ParserConfigurationException e) {
      throw new Rejected("unreadable XML: " + firstLine(e.getMessage()));
    } catch (StackOverflowError e) {
      throw new Rejected("XML nested too deeply");
    }
  }

  /** Direct child elements of {@code parent} with local name {@code name} (any namespace). */
  static List<Element> children(Node parent, String name) {
    List<Element> result = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && name.equals(e.getLocalName())) {
        result.add(e);
      }
    }
    return result;
  }

  /** Every direct child element of {@code parent}. */
  static List<Element> children(Node parent) {
    List<Element> result = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e) {
        result.add(e);
      }
    }
    return result;
  }

  /** The first direct child element with local name {@code name}. */
  static Optional<Element> child(Node parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && name.equals(e.getLocalName())) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }

  /** Follows a path of local names from {@code from}, first match at each step. */
  static Optional<Element> path(Node from, String... names) {
    Optional<Element> at = from instanceof Element e ? Optional.of(e) : Optional.empty();
    Node node = from;
    for (String name : names) {
      at = child(node, name);
      if (at.isEmpty()) {
        return at;
      }
      node = at.get();
    }
    return at;
  }

  /** The text content of an element, trimmed. */
  static String text(Element e) {
    return e.getTextContent().trim();
  }

  /** Escapes text for an XML element or attribute value. */
  static String escape(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '&' -> out.append("&amp;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&apos;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "no detail";
    }
    String line = message.lines().findFirst().orElse("");
    return line.length() > 200 ? line.substring(0, 200) + "..." : line;
  }

  private static final ErrorHandler SILENT =
      new ErrorHandler() {
        @Override
        public void warning(SAXParseException e) {}

        @Override
        public void error(SAXParseException e) throws SAXException {
          throw e;
        }

        @Override
        public void fatalError(SAXParseException e) throws SAXException {
          throw e;
        }
      };
}
