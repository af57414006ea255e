// FuzzTests.cs: the C# codec against libnnn over the fuzz corpora: every
// input of the harnesses that read a .nnn file whole (fuzz_decode, fuzz_dump,
// fuzz_run: fuzz/checks.c decodes the input as it is, and fuzz_run picks its
// run inputs itself), their committed seeds (fuzz/seeds/<harness>), the
// inputs the fuzzer saved (tests/regress/<harness>) and, when `make fuzz`
// has run, its work corpus (build/san/fuzz/corpus/<harness>, fuzz/Makefile.inc).
// The other harnesses (fuzz_json, fuzz_npy, fuzz_onnx) read other formats.
// Each distinct input is decoded and validated by one `nnnkit testee` and by
// C#: the same verdict and problems (code, path, offset, message).
using System;
using System.Collections.Generic;
using System.IO;
using System.Json;
using NUnit.Framework;

namespace Nnn.Tests
{
    [TestFixture]
    public sealed class FuzzTests
    {
        static readonly string[] Harnesses = { "fuzz_decode", "fuzz_dump", "fuzz_run" };

        /// <summary>The corpora's folders that exist, the committed seeds first.</summary>
        static List<string> Folders()
        {
            var dirs = new List<string>();
            foreach (string h in Harnesses)
                foreach (string d in new[] { Path.Combine(Tree.Source, "fuzz", "seeds", h),
                                             Path.Combine(Tree.Source, "tests", "regress", h),
                                             Path.Combine(Tree.Source, "build", "san", "fuzz", "corpus", h) })
                    if (Directory.Exists(d))
                        dirs.Add(d);
            return dirs;
        }

        [Test]
        public void EveryInputDecodesAndValidatesAsLibnnn()
        {
            // Distinct contents only: the harnesses share most seeds, and libFuzzer names inputs by their hash.
            var byContent = new Dictionary<string, string>();
            int files = 0;
            var perFolder = new List<string>();
            foreach (string dir in Folders())
            {
                string[] inDir = Directory.GetFiles(dir);
                Array.Sort(inDir, StringComparer.Ordinal);
                foreach (string f in inDir)
                    byContent[Convert.ToBase64String(File.ReadAllBytes(f))] = f;
                files += inDir.Length;
                perFolder.Add(inDir.Length + " in " + dir.Substring(Tree.Source.Length + 1));
            }
            var inputs = new List<string>(byContent.Values);
            inputs.Sort(StringComparer.Ordinal);
            Assert.IsNotEmpty(inputs, "no fuzz input found under fuzz/seeds and tests/regress");

            var q = new Libnnn();
            var ids = new List<int[]>();
            foreach (string f in inputs)
                ids.Add(new[] { q.Decode(f), q.Validate(f) });
            Dictionary<long, JsonObject> answers = q.Answers();
            var bad = new Mismatches();
            int refused = 0;
            for (int i = 0; i < inputs.Count; i++)
            {
                string what = inputs[i].Substring(Tree.Source.Length + 1);
                byte[] bytes = File.ReadAllBytes(inputs[i]);
                List<string> decode = Libnnn.Problems(answers[ids[i][0]], firstOnly: true);
                if (decode.Count > 0)
                    refused++;
                bad.Same(what + " decode", decode, Libnnn.CsDecode(bytes));
                bad.Same(what + " validate", Libnnn.Problems(answers[ids[i][1]]), Libnnn.CsValidate(bytes, null));
            }
            Console.WriteLine("FuzzTests: " + files + " files (" + string.Join(", ", perFolder) + "), " + inputs.Count
                              + " distinct, " + refused + " refused by the decoder");
            bad.AssertNone("decode and validate of " + inputs.Count + " fuzz inputs");
        }
    }
}
