"""What the browser tests ask of every page they show (tests/web)."""

# Text cut or spilling: an element showing text whose content is wider than its box, or
# clipped below it (inline boxes are measured by their block). Evaluated in the page: the
# list of the elements cut, empty when none is.
CUT = """(() => {
  const bad = [];
  for (const e of document.querySelectorAll("body *")) {
    if (e.closest("[hidden]") || ["INPUT", "CANVAS", "SCRIPT"].includes(e.tagName)) continue;
    const cs = getComputedStyle(e);
    if (cs.display === "none" || cs.display === "inline" || !e.getClientRects().length) continue;
    const text = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())
      || [...e.children].some((c) => getComputedStyle(c).display === "inline");
    if (!text) continue;
    if (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1
        && cs.overflowY === "hidden") {
      bad.push(`${e.tagName}.${e.className}: ${e.textContent.slice(0, 40)}`);
    }
  }
  return bad;
})()"""
