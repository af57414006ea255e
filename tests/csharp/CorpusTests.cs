// CorpusTests.cs: the C# codec against libnnn over every case of the
// conformance corpus (build/conformance/manifest.json, read whole: no count
// is written here): the decoder's verdict and first problem, and validate's
// every problem (code, path, offset and message, in order), as one
// `nnnkit testee` answers them; the C# testee's answers to the same requests;
// and the byte-exact round trip of every valid case and every real file.
using System;
using System.Collections.Generic;
using System.IO;
using System.Json;
using System.Text;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class CorpusTests
    {
        [Test]
        public void EveryCaseDecodesAndValidatesAsLibnnn()
        {
            List<JsonObject> cases = Manifest.Cases(Tree.Corpus);
            var q = new Libnnn();
            var ids = new List<int[]>();
            foreach (JsonObject c in cases)
            {
                string file = Manifest.File_(Tree.Corpus, c);
                ids.Add(new[] { q.Decode(file), q.Validate(file, Manifest.Shape(c)) });
            }
            Dictionary<long, JsonObject> answers = q.Answers();
            var bad = new Mismatches();
            int problems = 0;
            for (int i = 0; i < cases.Count; i++)
            {
                JsonObject c = cases[i];
                string id = Manifest.Id(c);
                byte[] bytes = File.ReadAllBytes(Manifest.File_(Tree.Corpus, c));
                long[] shape = Manifest.Shape(c);
                List<string> decode = Libnnn.Problems(answers[ids[i][0]], firstOnly: true);
                List<string> validate = Libnnn.Problems(answers[ids[i][1]]);
                problems += validate.Count;
                // The corpus is libnnn's too: a verdict that is not the manifest's is a stale build.
                if ((validate.Count == 0) != Manifest.Valid(c))
                    bad.Add(id + ": libnnn " + (validate.Count == 0 ? "accepts" : "refuses") + " it, the manifest says "
                            + (string)c["expect"]);
                bad.Same(id + " decode", decode, Libnnn.CsDecode(bytes));
                bad.Same(id + " validate (Model.Check)", validate, Libnnn.CsValidate(bytes, shape));
                if (decode.Count == 0)
                    bad.Same(id + " Model.Read + Validate", validate, Libnnn.Lines(Model.Read(bytes).Validate(shape)));
            }
            Console.WriteLine("CorpusTests: " + cases.Count + " cases of " + Tree.Corpus + ", " + problems
                              + " problems libnnn's validate reports");
            bad.AssertNone("decode and validate of " + cases.Count + " cases");
        }

        /// <summary>The C# testee (nnn-cs testee, one process) answers decode and validate of every case
        /// with libnnn's verdict, first problem and every problem.</summary>
        [Test]
        public void TheCsTesteeAnswersEveryCaseAsLibnnn()
        {
            List<JsonObject> cases = Manifest.Cases(Tree.Corpus);
            var q = new Libnnn();
            foreach (JsonObject c in cases)
            {
                string file = Manifest.File_(Tree.Corpus, c);
                q.Decode(file);
                q.Validate(file, Manifest.Shape(c));
            }
            Dictionary<long, JsonObject> want = q.Answers(), got = q.Answers(ours: true);
            var bad = new Mismatches();
            for (long id = 1; id <= want.Count; id++)
            {
                JsonObject c = cases[(int)(id - 1) / 2];
                string what = Manifest.Id(c) + ((id & 1) == 1 ? " decode" : " validate");
                bad.Same(what + " (first problem)", Libnnn.Problems(want[id], true), Libnnn.Problems(got[id], true));
                bad.Same(what + " (problems)", Libnnn.Problems(want[id]), Libnnn.Problems(got[id]));
            }
            bad.AssertNone("nnn-cs testee's answers to " + want.Count + " requests");
        }

        [Test]
        public void ValidCasesReencodeByteForByte()
        {
            var files = new List<string>();
            foreach (JsonObject c in Manifest.Cases(Tree.Corpus))
                if (Manifest.Valid(c))
                    files.Add(Manifest.File_(Tree.Corpus, c));
            Console.WriteLine("CorpusTests: " + files.Count + " valid cases re-encoded");
            RoundTrip(files, "valid cases of " + Tree.Corpus);
        }

        [Test]
        public void RealFilesReencodeByteForByte()
        {
            string real = Path.Combine(Tree.Shared, "corpus", "real");
            string[] files = Directory.Exists(real) ? Directory.GetFiles(real, "*.nnn") : new string[0];
            if (files.Length == 0)
                Assert.Ignore("skipped: no real files in " + real + " (they are outside the project: set NNN_SHARED)");
            Array.Sort(files, StringComparer.Ordinal);
            Console.WriteLine("CorpusTests: " + files.Length + " real files re-encoded");
            RoundTrip(files, "real files of " + real);
        }

        /// <summary>Each file, read and written back by ToBytes, Write(Stream) and Write(path), is the same bytes;
        /// Write(path) leaves nothing else in the folder.</summary>
        internal static void RoundTrip(IList<string> files, string what, Registry registry = null)
        {
            string dir = Tree.TempDir();
            var bad = new Mismatches();
            try
            {
                for (int i = 0; i < files.Count; i++)
                {
                    byte[] want = File.ReadAllBytes(files[i]);
                    string name = Path.GetFileName(files[i]);
                    try
                    {
                        Model m = Model.Read(want, registry);
                        Differ(bad, name + " ToBytes", want, m.ToBytes());
                        var s = new MemoryStream();
                        m.Write(s);
                        Differ(bad, name + " Write(Stream)", want, s.ToArray());
                        string path = Path.Combine(dir, i + ".nnn");
                        m.Write(path);
                        Differ(bad, name + " Write(path)", want, File.ReadAllBytes(path));
                    }
                    catch (NnnException e)
                    {
                        bad.Add(name + ": " + e.Problem);
                    }
                }
                string[] left = Directory.GetFiles(dir);
                if (bad.Count == 0 && left.Length != files.Count)
                    bad.Add("Write(path) left " + left.Length + " files for " + files.Count + " written: " + string.Join(", ", left));
            }
            finally
            {
                Directory.Delete(dir, true);
            }
            bad.AssertNone("round trips of " + files.Count + " " + what);
        }

        static void Differ(Mismatches bad, string what, byte[] want, byte[] got)
        {
            int n = Math.Min(want.Length, got.Length), at = 0;
            while (at < n && want[at] == got[at])
                at++;
            if (at == n && want.Length == got.Length)
                return;
            bad.Add(what + ": " + got.Length + " bytes for " + want.Length + ", first difference at " + at
                    + (at < n ? " (0x" + got[at].ToString("x2") + " for 0x" + want[at].ToString("x2") + ")" : ""));
        }
    }
}
