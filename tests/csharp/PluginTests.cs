// PluginTests.cs: the example plugin (examples/plugin-pool-swish) in C#:
// nnngen's class for its fragment (Nnn.Poolswish.dll, tests/tests.mk)
// registered in a Registry reads, validates and writes every case of the
// fragment's conformance corpus as its manifest says; unregistered, the
// plugin's IDs are libnnn's E_UNKNOWN_ID, with libnnn's path, offset, message
// and remedy (libnnn with no plugin loaded: nnnkit --no-default-plugins).
using System;
using System.Collections.Generic;
using System.IO;
using System.Json;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class PluginTests
    {
        static string Corpus => Path.Combine(Tree.Build, "csharp", "plugin", "conformance");

        static Registry Registered()
        {
            var r = new Registry();
            PoolswishPlugin.Register(r);
            return r;
        }

        /// <summary>Whether <paramref name="p"/> (a problem line) is the manifest's problem: its code, and its
        /// path and offset where the manifest gives them.</summary>
        static bool IsCase(JsonObject c, Problem p)
        {
            if (p.Code.ToString() != (string)c["code"])
                return false;
            if ((object)c["path"] != null && p.Path != (string)c["path"])
                return false;
            return (object)c["offset"] == null || p.Offset == (long)c["offset"];
        }

        static string Expected(JsonObject c) =>
            (string)c["code"] + " at " + ((object)c["path"] == null ? "any path" : "'" + (string)c["path"] + "'") + " @"
            + ((object)c["offset"] == null ? "any offset" : c["offset"].ToString());

        [Test]
        public void EveryCaseAsTheManifestSays()
        {
            Registry registry = Registered();
            List<JsonObject> cases = Manifest.Cases(Corpus);
            var bad = new Mismatches();
            var valid = new List<string>();
            int plugin = 0;
            foreach (JsonObject c in cases)
            {
                string id = Manifest.Id(c), file = Manifest.File_(Corpus, c), kind = (string)c["kind"];
                byte[] bytes = File.ReadAllBytes(file);
                Problem decoded = null;
                Model m = null;
                IList<Problem> found;
                try
                {
                    m = Model.Read(bytes, registry);
                }
                catch (NnnException e)
                {
                    decoded = e.Problem;
                }
                try
                {
                    found = Model.Check(bytes, Manifest.Shape(c), registry);
                }
                catch (Exception e)
                {
                    bad.Add(id + ": Model.Check threw " + e);
                    continue;
                }
                if (m != null)
                    foreach (Layer l in m.Layers)
                        if (l.BodyType != null || l.Activation.ParamsType != null)
                        {
                            plugin++;
                            break;
                        }
                string what = id + " (" + kind + ")";
                if (kind == "structural")
                {
                    if (decoded == null || !IsCase(c, decoded))
                        bad.Add(what + ": decode gives " + (decoded == null ? "no problem" : decoded.Code + " " + decoded)
                                + ", the manifest " + Expected(c));
                    if (found.Count == 0 || !IsCase(c, found[0]))
                        bad.Add(what + ": validate's first problem is " + (found.Count == 0 ? "none" : found[0].Code + " " + found[0])
                                + ", the manifest says " + Expected(c));
                    continue;
                }
                if (decoded != null)
                    bad.Add(what + ": decode refuses it: " + decoded.Code + " " + decoded);
                else if (kind == "valid")
                {
                    if (found.Count > 0)
                        bad.Add(what + ": validate finds " + string.Join("; ", Libnnn.Lines(found)));
                    valid.Add(file);
                }
                else
                {
                    bool among = false;
                    foreach (Problem p in found)
                        among |= IsCase(c, p);
                    if (!among)
                        bad.Add(what + ": validate finds " + (found.Count == 0 ? "nothing" : string.Join("; ", Libnnn.Lines(found)))
                                + ", the manifest says " + Expected(c) + " among them");
                }
            }
            Console.WriteLine("PluginTests: " + cases.Count + " cases of " + Corpus + " (" + plugin
                              + " decoded with a plugin type), " + valid.Count + " valid ones re-encoded");
            Assert.Greater(plugin, 0, "no case of " + Corpus + " holds a plugin type: the corpus is not the plugin's");
            bad.AssertNone("decode and validate of " + cases.Count + " plugin cases");
            CorpusTests.RoundTrip(valid, "valid cases of " + Corpus, registry);
        }

        /// <summary>Unregistered, every case decodes and validates as libnnn with no plugin loaded
        /// (one testee for all): the plugin's IDs are E_UNKNOWN_ID, libnnn's framing probe and all.</summary>
        [Test]
        public void UnregisteredEveryCaseAsLibnnnWithoutThePlugin()
        {
            List<JsonObject> cases = Manifest.Cases(Corpus);
            var q = new Libnnn("--no-default-plugins");
            var ids = new List<int[]>();
            foreach (JsonObject c in cases)
            {
                string file = Manifest.File_(Corpus, c);
                ids.Add(new[] { q.Decode(file), q.Validate(file, Manifest.Shape(c)) });
            }
            Dictionary<long, JsonObject> answers = q.Answers();
            var bad = new Mismatches();
            int unknown = 0;
            for (int i = 0; i < cases.Count; i++)
            {
                byte[] bytes = File.ReadAllBytes(Manifest.File_(Corpus, cases[i]));
                JsonObject d = answers[ids[i][0]];
                if (!(bool)d["ok"] && (string)d["code"] == "E_UNKNOWN_ID")
                    unknown++;
                bad.Same(Manifest.Id(cases[i]) + " decode", Libnnn.Problems(d, firstOnly: true), Libnnn.CsDecode(bytes));
                bad.Same(Manifest.Id(cases[i]) + " validate", Libnnn.Problems(answers[ids[i][1]]),
                         Libnnn.CsValidate(bytes, Manifest.Shape(cases[i])));
            }
            Console.WriteLine("PluginTests: " + cases.Count + " cases unregistered, " + unknown + " of them E_UNKNOWN_ID");
            Assert.Greater(unknown, 0, "no case of " + Corpus + " is refused for an unknown ID without the plugin");
            bad.AssertNone("decode and validate of " + cases.Count + " plugin cases without the plugin");
        }

        /// <summary>A valid file with the plugin's layer, read without the plugin: nnnkit validate --json's
        /// first problem (code, path, offset, message) and remedy.</summary>
        [Test]
        public void UnregisteredLayerIsLibnnnsUnknownId()
        {
            Registry registry = Registered();
            string file = null;
            foreach (JsonObject c in Manifest.Cases(Corpus))
                if (Manifest.Valid(c))
                {
                    Model m = Model.Read(Manifest.File_(Corpus, c), registry);
                    if (m.Layers.Exists(l => l.BodyType != null && l.BodyType.Plugin == PoolswishPlugin.Name))
                    {
                        file = Manifest.File_(Corpus, c);
                        break;
                    }
                }
            Assert.IsNotNull(file, "no valid case of " + Corpus + " has a layer of plugin " + PoolswishPlugin.Name);
            Ran r = Tree.Run(Tree.Nnnkit, "--no-default-plugins validate --json " + Tree.Quote(file));
            Assert.AreEqual(1, r.Exit, "nnnkit validate: " + r);
            var want = (JsonObject)((JsonArray)((JsonObject)JsonValue.Parse(r.Out))["problems"])[0];
            var e = Assert.Throws<NnnException>(() => Model.Read(file));
            Assert.AreEqual("E_UNKNOWN_ID", (string)want["code"], "libnnn: " + r.Out);
            Assert.AreEqual((string)want["code"], e.Code.ToString(), "code; " + e.Problem);
            Assert.AreEqual((string)want["path"], e.Path, "path; " + e.Problem);
            Assert.AreEqual((long)want["offset"], e.Offset, "offset; " + e.Problem);
            Assert.AreEqual((string)want["message"], e.Problem.Message, "message");
            Assert.AreEqual((string)want["remedy"], Statuses.Remedy(e.Code), "remedy");
        }
    }
}
