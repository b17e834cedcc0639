import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { DataTable } from "./data-table";

describe("the shared table shell", () => {
  it("draws one header cell per column, figures right-aligned, with the caller's rows in the body", () => {
    const html = renderToStaticMarkup(
      <DataTable
        columns={[{ label: "UUID" }, { label: "copies", align: "right", title: "deliveries" }]}
        label="Hot UUIDs"
      >
        <tr>
          <td>01J</td>
          <td>3</td>
        </tr>
      </DataTable>,
    );
    expect(html).toContain('aria-label="Hot UUIDs"');
    expect(html.match(/<th /g)).toHaveLength(2);
    expect(html).toMatch(/<th title="deliveries" class="font-medium text-right">copies<\/th>/);
    expect(html).toMatch(/<tbody><tr><td>01J<\/td><td>3<\/td><\/tr><\/tbody>/);
  });
});
