"""The static site's builders: `micrograd site OUT` writes the playground and the course as a
folder of files any web host serves.

`static_site` (`build_site`: the playground's pages, Pyodide from npm, micrograd's wheel, Python's
saved start), `course_app` (`add_course`: the course's notebooks in a JupyterLite app beside it)
and `course_start` (the course's start page, where the site's Learn link lands). The pages
themselves are the playground's (`micrograd/playground/static/`): one front end for the server,
the widgets and the site's worker.
"""
