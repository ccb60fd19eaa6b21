"""The report as a list of blocks, ("h1".."h3", text), ("p", text),
("table", header, rows), ("svg", name, svg text or None), written out as
Markdown or as one self-contained HTML page (the SVGs inlined)."""
import html


def cell_md(c):
    return str(c).replace("|", "\\|").replace("\n", " ")


def to_md(blocks):
    out = []
    for b in blocks:
        if b[0] in ("h1", "h2", "h3"):
            out.append("%s %s\n" % ("#" * int(b[0][1]), b[1]))
        elif b[0] == "p":
            out.append(b[1] + "\n")
        elif b[0] == "table":
            out.append("| " + " | ".join(cell_md(h) for h in b[1]) + " |")
            out.append("|" + "---|" * len(b[1]))
            for r in b[2]:
                out.append("| " + " | ".join(cell_md(c) for c in r) + " |")
            out.append("")
        elif b[0] == "svg":
            out.append("![%s](plots/%s.svg)\n" % (b[1], b[1]) if b[2] else
                       "(plot %s unavailable: gnuplot missing, failed or nothing to plot)\n"
                       % b[1])
    return "\n".join(out) + "\n"


def inline_md(text):
    """`code` and **bold** for the HTML version; everything else escaped."""
    parts = html.escape(text).split("`")
    s = "".join(("<code>%s</code>" % p) if i % 2 else p for i, p in enumerate(parts))
    parts = s.split("**")
    s = "".join(("<b>%s</b>" % p) if i % 2 else p for i, p in enumerate(parts))
    return s.replace("&lt;br&gt;", "<br>")


def to_html(blocks, title):
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>"
           % html.escape(title),
           "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
           "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
           "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}"
           "th{background:#f0f0f0}code{font-size:12px}</style></head><body>"]
    for b in blocks:
        if b[0] in ("h1", "h2", "h3"):
            out.append("<%s>%s</%s>" % (b[0], html.escape(b[1]), b[0]))
        elif b[0] == "p":
            out.append("<p>%s</p>" % inline_md(b[1]))
        elif b[0] == "table":
            out.append("<table><tr>%s</tr>" % "".join("<th>%s</th>" % inline_md(str(h))
                                                      for h in b[1]))
            for r in b[2]:
                out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % inline_md(str(c)) for c in r))
            out.append("</table>")
        elif b[0] == "svg":
            if b[2]:
                svg = b[2]
                i = svg.find("<svg")
                out.append("<div>%s</div>" % (svg[i:] if i >= 0 else svg))
            else:
                out.append("<p>(plot %s unavailable: gnuplot missing, failed or nothing to "
                           "plot)</p>" % html.escape(b[1]))
    out.append("</body></html>")
    return "\n".join(out)
