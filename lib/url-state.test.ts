import { describe, expect, it } from "vitest";
import { DEFAULT_VIEW_STATE, hrefWithView, parseViewState, withParams } from "./url-state";

describe("url-state: a link reproduces the view", () => {
  it("parses range, refresh and handler, falling back to defaults on bad values", () => {
    expect(parseViewState(new URLSearchParams("range=6h&refresh=5s&handler=notification/on-page-viewed"))).toEqual({
      range: "6h",
      refresh: "5s",
      handler: "notification/on-page-viewed",
    });
    expect(parseViewState(new URLSearchParams("range=2y&refresh=1s&handler=../../etc"))).toEqual(DEFAULT_VIEW_STATE);
    expect(parseViewState(new URLSearchParams(""))).toEqual(DEFAULT_VIEW_STATE);
  });
  it("drops defaults and nulls, keeps other parameters", () => {
    const p = withParams(new URLSearchParams("prefix=a:dedup:b&range=6h"), {
      range: "1h",
      refresh: "off",
      handler: null,
    });
    expect(p.toString()).toBe("prefix=a%3Adedup%3Ab&refresh=off");
  });
  it("links between pages carry range and refresh only", () => {
    expect(hrefWithView("/keys", new URLSearchParams("range=24h&refresh=1m&handler=a/b&uuid=x"))).toBe(
      "/keys?range=24h&refresh=1m",
    );
    expect(hrefWithView("/alerts", new URLSearchParams(""))).toBe("/alerts");
  });
});
