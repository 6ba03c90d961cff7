import { describe, expect, it } from "vitest";
import { fieldProblem } from "./CredentialRows";

describe("fieldProblem (the custom credential editor)", () => {
  it("puts the server's problem at the field it names", () => {
    expect(fieldProblem("name: must be lowercase letters, digits and dashes")).toEqual({
      field: "name",
      problem: "must be lowercase letters, digits and dashes",
    });
    expect(fieldProblem("source: may not leave your home (`..`)")).toEqual({
      field: "source",
      problem: "may not leave your home (`..`)",
    });
  });

  it("names which host of the list is wrong, counting from one", () => {
    expect(fieldProblem("hosts[1]: `*.` is not a host")).toEqual({ field: "hosts", problem: "`*.` is not a host (entry 2)" });
    expect(fieldProblem("hosts: at least one host")).toEqual({ field: "hosts", problem: "at least one host" });
  });

  it("keeps a problem over several lines whole", () => {
    expect(fieldProblem("source: is a link\nto /etc")).toEqual({ field: "source", problem: "is a link\nto /etc" });
  });

  it("leaves a message that names no field of the form to the form as a whole", () => {
    expect(fieldProblem("the settings file is not valid TOML")).toBeNull();
    expect(fieldProblem("path: not a field here")).toBeNull();
    expect(fieldProblem("name:no space after the colon")).toBeNull();
  });
});
