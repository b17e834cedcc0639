"use client";

import { useViewState } from "@/lib/url-state";
import { EmptyState, Panel } from "../panel";
import { KeyActions } from "./key-actions";
import { KeyLookup } from "./key-lookup";
import { KeyPages } from "./key-pages";
import { PrefixTree } from "./prefix-tree";

/** The key browser: prefix tree, pages of keys of the selected handler (with the key actions), UUID lookup. `prefix=` and `uuid=` live in the URL. */
export function KeyBrowser() {
  const { params, set } = useViewState();
  const prefix = params.get("prefix");
  const uuid = params.get("uuid") ?? "";
  return (
    <div className="grid gap-4 lg:grid-cols-[18rem_1fr]">
      <PrefixTree selected={prefix} onSelect={(p) => set({ prefix: p })} />
      <div className="min-w-0 space-y-4">
        <KeyLookup key={uuid} uuid={uuid} prefix={prefix} onLookup={(u) => set({ uuid: u })} />
        {prefix ? (
          <>
            <KeyPages key={prefix} prefix={prefix} />
            <KeyActions key={`actions-${prefix}`} prefix={prefix} />
          </>
        ) : (
          <Panel title="Keys">
            <EmptyState>Pick a handler on the left to page through its keys.</EmptyState>
          </Panel>
        )}
      </div>
    </div>
  );
}
