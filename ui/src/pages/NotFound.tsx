import { A } from "@solidjs/router";
import type { JSX } from "solid-js";
import { PageHeader } from "../components/PageHeader";
import { Empty } from "../components/states";

export default function NotFound(): JSX.Element {
  return (
    <>
      <PageHeader title="Page not found" />
      <section class="page-body">
        <Empty
          title="There is no page at this address"
          action={
            <A class="button" href="/sessions">
              Go to Sessions
            </A>
          }
        />
      </section>
    </>
  );
}
