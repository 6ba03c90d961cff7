import type { JSX } from "solid-js";
import { PageHeader } from "../components/PageHeader";
import { Empty } from "../components/states";

/**
 * A page whose content needs the server's API, which this build does not include yet. It says
 * so plainly instead of showing invented data.
 */
export function Placeholder(props: {
  title: string;
  description: string;
  what: string;
}): JSX.Element {
  return (
    <>
      <PageHeader title={props.title} description={props.description} />
      <section class="page-body">
        <Empty title={`${props.what} will appear here`}>
          This build of the interface is not yet connected to the API of <code>paddock up</code>.
        </Empty>
      </section>
    </>
  );
}
