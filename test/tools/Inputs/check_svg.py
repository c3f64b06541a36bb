"""Checks that an SVG memory plan is well-formed XML with one stacked
polygon per series (persistent, activations, temporaries, workspace),
each with points, and prints the series it found, the title and the
caption of the time axis."""
import sys
import xml.etree.ElementTree as ET

ns = {"svg": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
series = [p.get("data-series") for p in root.findall("svg:polygon", ns)]
for p in root.findall("svg:polygon", ns):
    points = p.get("points").split()
    assert len(points) >= 4, p.get("data-series")
    for xy in points:
        x, y = map(float, xy.split(","))
print("series:", " ".join(series))
print("title:", root.find("svg:title", ns).text)
for t in root.findall("svg:text", ns):
    if t.text and "program order" in t.text:
        print("axis:", t.text)
